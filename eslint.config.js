// ESLint over the page's modules (web/): the recommended rules, browser and worker globals.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['web/engine/**'] },
  {
    files: ['web/**/*.js'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.worker },
    },
  },
];

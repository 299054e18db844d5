// SPDX-License-Identifier: MIT
// The page's scripts never turn a string into markup (issue #7): every text reaches the DOM
// through textContent or attributes set one by one (render.js el()). This reads the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const kMarkupSinks = /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|srcdoc)\b|\bon[a-z]+\s*=\s*['"`]|setAttribute\(\s*['"`]on/;

test('no script in web/ writes markup from a string', () => {
  const dir = new URL('../../web/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
  assert.ok(files.length >= 7, `only ${files.length} scripts found`);
  for (const f of files) {
    readFileSync(new URL(f, dir), 'utf8').split('\n').forEach((line, i) => {
      assert.doesNotMatch(line, kMarkupSinks, `web/${f}:${i + 1}: ${line.trim()}`);
    });
  }
});

test('index.html has no inline script, style or handler (the CSP allows none)', () => {
  const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline <script>');
  assert.doesNotMatch(html, /<style\b|\sstyle=/, 'an inline style');
  assert.doesNotMatch(html, /\son[a-z]+=/, 'an inline event handler');
});

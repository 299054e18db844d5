// @ts-check
// The page's language, theme and market, each kept in this browser (localStorage).
import { chooseLanguage, preferredLanguage, setLanguage } from './i18n.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem('gpuplan.theme', theme);
}

// languageChanged() redraws what the page wrote in the language before.
export function initPreferences(languageChanged) {
  const lang = preferredLanguage();
  $('#lang').value = lang;
  // English is there at once; another language redraws what was written before it arrived.
  setLanguage('en');
  if (lang !== 'en') chooseLanguage(lang).then(languageChanged);
  $('#lang').addEventListener('change', async (e) => {
    localStorage.setItem('gpuplan.lang', e.target.value);
    await chooseLanguage(e.target.value);
    languageChanged();
  });
  // The market whose prices the plan uses is remembered like the language (share.js reads it
  // when the page opens without a link; a link's own market wins).
  $('#market').addEventListener('change', (e) => localStorage.setItem('gpuplan.market', e.target.value));
  const theme = localStorage.getItem('gpuplan.theme') || 'auto';
  $('#theme').value = theme;
  applyTheme(theme);
  $('#theme').addEventListener('change', (e) => applyTheme(e.target.value));
}

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

test('every text the page names has English and Chinese words', async () => {
  const { addWords, kLanguages } = await import('../../web/i18n.js');
  // The words a lazily loaded module brings (model-sources.js adds them on first use).
  const { kSourceWords } = await import('../../web/i18n-sources.js');
  addWords(kSourceWords);
  assert.deepEqual(Object.keys(kSourceWords).sort(), Object.keys(kLanguages).sort());
  // Their keys are also built at run time (`hub_${kind}`, a GGUF note's key): each in both.
  assert.deepEqual(Object.keys(kSourceWords['zh-CN']).sort(), Object.keys(kSourceWords.en).sort());
  const dir = new URL('../../web/', import.meta.url);
  const keys = new Set([...readFileSync(new URL('index.html', dir), 'utf8').matchAll(/data-i18n="([a-z0-9_]+)"/g)]
    .map((m) => m[1]));
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    for (const m of readFileSync(new URL(f, dir), 'utf8').matchAll(/\bt\('([a-z0-9_]+)'/g)) keys.add(m[1]);
  }
  // Every rank code the engine can send (issue #15) is worded in both languages.
  const reasons = readFileSync(new URL('../../engine/src/plan/plan_reasons.cpp', import.meta.url), 'utf8');
  const codes = [...reasons.matchAll(/(?:Wording\{|return \{)"([a-z_]+)"/g)].map((m) => m[1]);
  assert.ok(codes.length >= 9, `only ${codes.length} rank codes found in plan_reasons.cpp`);
  for (const code of codes) keys.add(`rank_${code}`);
  // The memory parts the detail chart names (render.js kParts), in people's words.
  const render = readFileSync(new URL('render.js', dir), 'utf8');
  const parts = render.match(/const kParts = \[([^\]]+)\]/)[1].match(/'([a-z_]+)'/g).map((q) => q.slice(1, -1));
  assert.equal(parts.length, 7);
  for (const part of parts) keys.add(`part_${part}`);
  const missing = [];
  for (const key of keys) {
    for (const [lang, words] of Object.entries(kLanguages)) if (!Object.hasOwn(words, key)) missing.push(`${lang}: ${key}`);
  }
  assert.deepEqual(missing, []);
});

// SPDX-License-Identifier: MIT
// The page's scripts never turn a string into markup: every text reaches the DOM
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

// Both dictionaries: the Chinese one is its own module, fetched when chosen.
async function allLanguages() {
  const { kLanguages, kLanguageNames, loadDetailWords, loadLanguage } = await import('../../web/i18n.js');
  for (const lang of kLanguageNames) assert.ok(await loadLanguage(lang), lang);
  await loadDetailWords();  // the detail view's words, merged into both
  assert.deepEqual(Object.keys(kLanguages).sort(), ['en', 'zh-CN']);
  return kLanguages;
}

test('every text the page names has English and Chinese words', async () => {
  const kLanguages = await allLanguages();
  const { addWords } = await import('../../web/i18n.js');
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
  // Every rank code the engine can send is worded in both languages.
  const reasons = readFileSync(new URL('../../engine/src/plan/plan_reasons.cpp', import.meta.url), 'utf8');
  const codes = [...reasons.matchAll(/(?:Wording\{|return \{|rank_code = )"([a-z_]+)"/g)].map((m) => m[1]);
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

// Every code the engine can put in front of the user, read from its sources
// as the rank codes are above: notes (advice, warnings, infeasibility, verdicts, fleet advice),
// plan rejections, input errors, diagnoses, remedies and the monitoring targets; each needs the
// page's words in both languages, so no engine English reaches a Chinese page.
function engineSources(dir = new URL('../../engine/src/', import.meta.url)) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...engineSources(new URL(`${e.name}/`, dir)));
    else if (e.name.endsWith('.cpp')) out.push([e.name, readFileSync(new URL(e.name, dir), 'utf8')]);
  }
  return out;
}

export function engineCodes() {
  const codes = { note: new Set(), reject: new Set(), err: new Set(), diag: new Set(), remedy: new Set(), yard: new Set(),
    factor: new Set() };
  const all = (re, text, into) => { for (const m of text.matchAll(re)) for (const c of m.slice(1)) if (c) into.add(c); };
  for (const [name, text] of engineSources()) {
    all(/Note\{\s*"([a-z_]+)"/g, text, codes.note);
    all(/Note\{\s*[a-z_.>-]+\s*\?\s*"([a-z_]+)"\s*:\s*"([a-z_]+)"/g, text, codes.note);
    all(/\bInfeasible\(\s*"([a-z_]+)"/g, text, codes.note);
    all(/\bwarn\(\s*"([a-z_]+)"/g, text, codes.note);
    // A stack's caveat on a card is data (catalog/stacks.json, stacks/policy.cpp): its code beside it.
    all(/_note_code = "([a-z0-9_]+)"/g, text, codes.note);
    all(/\bError\(\s*"([a-z_]+)"/g, text, codes.err);
    all(/errors->push_back\(\{\s*"([a-z_]+)"/g, text, codes.err);
    all(/\bg\.id,\s*"([a-z_]+)"/g, text, codes.reject);
    all(/\bChecked\(\s*r,\s*"([a-z_]+)"/g, text, codes.remedy);
    all(/\bAdvice\(\s*"([a-z_]+)"/g, text, codes.remedy);
    all(/\{\s*(?:just \? "([a-z_]+)" : "([a-z_]+)"|"([a-z_]+)"),\s*"(?:estimate|measurement)"/g, text, codes.diag);
    if (name === 'calibration_yardstick.cpp') all(/\bAdd\(\s*"([a-z_]+)"/g, text, codes.yard);
    if (name.startsWith('calibration')) all(/Note\{\s*"(factor_[a-z_]+)"/g, text, codes.factor);
  }
  // A card the estimate refuses (estimate.cpp's CardProblem) is rejected under the note's code.
  for (const c of ['inference_only_card', 'engine_unsupported_on_card', 'stack_unsupported_on_card']) codes.reject.add(c);
  // Factor notes are worded under factor_*, not note_*.
  for (const c of codes.factor) codes.note.delete(c);
  return codes;
}

test('every code the engine can emit has the page\'s words in English and Chinese', async () => {
  const kLanguages = await allLanguages();
  const codes = engineCodes();
  const floor = { note: 60, reject: 10, err: 15, diag: 4, remedy: 20, yard: 3, factor: 3 };
  for (const [family, set] of Object.entries(codes)) {
    assert.ok(set.size >= floor[family], `only ${set.size} ${family} codes found in engine/src: ${[...set]}`);
  }
  assert.ok(codes.note.has('keep_separate') && codes.note.has('switch_now') && codes.note.has('exceeds_memory'));
  assert.ok(codes.reject.has('misses_deadline') && codes.reject.has('node_power'));
  const missing = [];
  for (const [family, set] of Object.entries(codes)) {
    for (const code of set) {
      const key = family === 'factor' ? code : `${family}_${code}`;
      for (const [lang, words] of Object.entries(kLanguages)) if (!Object.hasOwn(words, key)) missing.push(`${lang}: ${key}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('every figure the detail view explains has a name in both languages', async () => {
  const kLanguages = await allLanguages();
  // The explain pointers the engine writes (its JSON writers and physics), as the page's keys.
  const pointers = new Set();
  for (const [, text] of engineSources()) {
    for (const m of text.matchAll(/"(\/(?:memory|performance|power|cost|reliability|framework|model)\/[a-z_/]+[a-z])"/g)) pointers.add(m[1]);
  }
  assert.ok(pointers.size >= 20, `only ${pointers.size} pointers`);
  const missing = [];
  for (const p of pointers) {
    const part = p.match(/^\/memory\/per_gpu_bytes\/([a-z_]+)$/);
    const key = part ? `part_${part[1]}` : `ptr${p.replace(/\//g, '_')}`;
    for (const [lang, words] of Object.entries(kLanguages)) if (!Object.hasOwn(words, key)) missing.push(`${lang}: ${key} (${p})`);
  }
  assert.deepEqual(missing, []);
  // The headline figures' formulas are Chinese on a Chinese page.
  for (const p of ['/memory/total_bytes', '/performance/training/time_s', '/performance/inference/tpot_ms',
    '/performance/inference/decode_tokens_per_s_total', '/power/total_watts', '/cost/usd_per_hour']) {
    assert.ok(Object.hasOwn(kLanguages['zh-CN'], `formula${p.replace(/\//g, '_')}`), p);
  }
});

test('the English and Chinese dictionaries word the same keys (the Chinese formulas of the headline figures aside)', async () => {
  const kLanguages = await allLanguages();
  const en = Object.keys(kLanguages.en);
  const zh = Object.keys(kLanguages['zh-CN']).filter((k) => !k.startsWith('formula_'));
  assert.deepEqual(en.filter((k) => !zh.includes(k)), [], 'English only');
  assert.deepEqual(zh.filter((k) => !en.includes(k)), [], 'Chinese only');
});

test('package.json carries the engine version, the one version source', () => {
  const header = readFileSync(new URL('../../engine/src/core/version.h', import.meta.url), 'utf8');
  const engine = /kEngineVersion = "([0-9]+\.[0-9]+\.[0-9]+)"/.exec(header)?.[1];
  assert.ok(engine, 'no kEngineVersion in engine/src/core/version.h');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.version, engine);
});

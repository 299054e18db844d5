// SPDX-License-Identifier: MIT
// The form and its link: six lines give recommendations that agree with the native CLI on the
// exact request the page sent, inputs re-plan and patch the table in place, share links round-trip,
// the language switch sticks, embed mode reports its height, and bad input (a broken custom
// catalog, a negative length, a damaged link) is named rather than shown as NaN. The first ten
// tests run in order on one page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import {
  assertMatchesCli,
  assertPageMatchesCli,
  check,
  cli,
  cliPlan,
  context,
  kMaxGpus,
  kNodePower,
  kSeqLen,
  kTestTimeout,
  page,
  planSeq,
  readPage,
  requestText,
  setField,
  setLang,
  shareLink,
  status,
  tableRows,
  url,
  waitPlanned,
  waitReady,
} from './harness.mjs';

let firstRequest;  // the first two tests' request and table, which the share test reopens
let firstRows;

test('six lines give recommendations', { timeout: kTestTimeout }, () =>
  check('a-six-lines', () => page, async () => {
  await page.goto(url);
  await waitReady(page);
  const seq = await planSeq(page);
  assert.ok(Number.isFinite(seq), `body data-plan-seq is not a number: ${seq}`);
  await setField(page, '#kind', 'lora');
  await setField(page, '#model', 'llama-3.1-8b');
  await setField(page, kSeqLen, '4096');
  await setField(page, '#weights', 'bf16');
  await setField(page, '#tokens', '1e9');
  await setField(page, kMaxGpus, '8');
  await setField(page, kNodePower, '');  // stays empty: no node power limit
  await waitPlanned(page, seq);
  const rowCount = await page.locator('#results tbody tr[data-gpu]').count();
  assert.ok(rowCount >= 5, `only ${rowCount} recommendation rows`);
  const { request, rows, text } = await readPage(page);
  firstRows = rows;  // kept before any assertion, so that the later tests still run on a mismatch
  firstRequest = text;
  assertMatchesCli(rows, cliPlan(text), request);
  // The request carries what was typed.
  assert.equal(request.workload?.kind, 'lora', text);
  assert.equal(request.model?.preset, 'llama-3.1-8b', text);
  assert.equal(request.workload?.seq_len, 4096, text);
  assert.equal(request.workload?.tokens, 1e9, text);
  assert.equal(request.precision?.weights, 'bf16', text);
  assert.equal(request.constraints?.max_gpus, 8, text);
  assert.equal(request.constraints?.node_power_w, undefined, `empty node power was sent: ${text}`);
}));

test('an input change re-plans', { timeout: kTestTimeout }, () =>
  check('b-replan', () => page, async () => {
  assert.ok(firstRows, 'needs the first test\'s state');
  const seq = await planSeq(page);
  // The table is rewritten in place (render.js renderTable, patch.js): its rows' nodes stay.
  const marked = await page.$$eval('#results tbody tr', (trs) => trs.map((tr, i) => { tr.keptAs = i; return i; }).length);
  await setField(page, kSeqLen, '8192');
  await waitPlanned(page, seq);
  const before = firstRows;
  const { request, rows, text } = await readPage(page);
  firstRequest = text;
  firstRows = rows;
  assert.equal(request.workload?.seq_len, 8192, text);
  assert.ok(rows.length >= 1, 'no rows after the change');
  assert.notEqual(rows[0].bytes, before[0]?.bytes, 'first row memory did not change');
  const cli = cliPlan(text);
  assertMatchesCli(rows, cli, request);
  const kept = await page.$$eval('#results tbody tr', (trs) => trs.map((tr) => tr.keptAs));
  assert.deepEqual(kept.slice(0, Math.min(marked, kept.length)), [...Array(Math.min(marked, kept.length)).keys()]);
  // What the rows show, not only their data attributes, is the new answer's: "x.x GiB of".
  const shown = await page.$$eval('#results tbody tr td[data-col="memory"] [data-figure]', (s) => s.map((x) => x.textContent));
  shown.forEach((words, i) => assert.ok(
    words.startsWith(`${(cli.recommendations[i].estimate.memory.total_bytes / 2 ** 30).toFixed(1)} GiB`), `row ${i}: ${words}`));
}));

test('a table patched from another plan is the table drawn afresh', { timeout: kTestTimeout }, () =>
  check('b-patch', () => page, async () => {
  // render.js describes the rows and patch.js rewrites only what differs from the description
  // each node was drawn from: patched from a serving plan to a training one and back, the table
  // must be the one drawn into an empty body, and every kept Details button must open its new row.
  const { text } = await readPage(page);
  const training = cliPlan(text);
  const serving = cliPlan(JSON.stringify({ model: { preset: 'llama-3.1-8b' },
    workload: { kind: 'inference', prompt_tokens: 2048, output_tokens: 512, concurrency: 64 },
    constraints: { max_gpus: 64, tpot_ms: 50 } }));
  assert.ok(training.recommendations.length > 25 && serving.recommendations.length >= 3);
  const out = await page.evaluate(async ([train, serve]) => {
    const { renderTable, summarize } = await import('./render.js');
    const rows = (plan, n) => plan.recommendations.slice(0, n).map((rec) => {
      rec.estimate.warnings ??= [];  // as drawPlan fills them in
      return { rec, summary: summarize(rec) };
    });
    // The DOM as a string with each element's attributes sorted: a patched node keeps the
    // attributes it had first, in their order, and gains new ones after them.
    const canon = (n) => (n.nodeType === Node.TEXT_NODE ? JSON.stringify(n.nodeValue)
      : `<${n.nodeName} ${[...n.attributes].map((a) => `${a.name}=${JSON.stringify(a.value)}`).sort().join(' ')}>` +
        `${[...n.childNodes].map(canon).join('')}</${n.nodeName}>`);
    const table = document.querySelector('#results');
    const body = () => table.appendChild(document.createElement('tbody'));
    const patched = body();
    const steps = [[serve, false, 25], [train, true, 25], [train, true, 10], [serve, false, 25]];
    const result = [];
    for (const [plan, isTraining, n] of steps) {
      const opened = [];
      const r = rows(plan, n);
      renderTable(patched, r, isTraining, (rec) => opened.push(rec.gpu), r[0].rec);
      const fresh = body();
      renderTable(fresh, r, isTraining, () => {}, r[0].rec);
      for (const b of patched.querySelectorAll('button.detail')) b.click();
      result.push({ same: canon(patched) === canon(fresh), rows: patched.rows.length,
        opened: opened.join(' '), want: r.map((x) => x.rec.gpu).join(' ') });
      fresh.remove();
    }
    patched.remove();
    return result;
  }, [training, serving]);
  for (const [i, step] of out.entries()) {
    assert.ok(step.same, `step ${i}: the patched table differs from one drawn afresh`);
    assert.equal(step.opened, step.want, `step ${i}: a Details button opened another row`);
  }
  assert.deepEqual(out.map((s) => s.rows), [Math.min(25, serving.recommendations.length), 25, 10,
    Math.min(25, serving.recommendations.length)]);
}));

test('the address follows the form once typing pauses, and at once when the page is left', { timeout: kTestTimeout }, () =>
  check('b-share-soon', () => page, async () => {
  // web/main.js shareSoon: history.replaceState waits for a pause in typing, off the re-plan.
  const before = await shareLink(page);
  const seq = await planSeq(page);
  const shown = await page.evaluate(async () => {
    const { decodeShare } = await import('./state.js');
    const input = document.getElementById('seq_len');
    const old = input.value;
    input.value = '3072';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    const pending = { share: document.body.dataset.share, hash: location.hash };
    window.dispatchEvent(new Event('pagehide'));
    const left = { share: document.body.dataset.share, seqLen: String(decodeShare(location.hash).state.seq_len) };
    input.value = old;  // the state the following tests start from
    input.dispatchEvent(new Event('input', { bubbles: true }));
    return { pending, left };
  });
  assert.deepEqual(shown.pending, { share: 'pending', hash: before });
  assert.deepEqual(shown.left, { share: 'written', seqLen: '3072' });
  await waitPlanned(page, seq);
  assert.equal(await shareLink(page), before);
}));

test('share link round trip', { timeout: kTestTimeout }, async () => {
  let other;
  await check('c-share', () => other ?? page, async () => {
    assert.ok(firstRequest, 'needs the previous tests\' state');
    await page.click('#share');
    await page.waitForFunction(() => document.querySelector('#share-url')?.value, null, { polling: 50 });
    const shareUrl = await page.inputValue('#share-url');
    const parsed = new URL(shareUrl);  // throws unless it is an absolute URL
    assert.equal(parsed.origin, new URL(url).origin, `share URL ${shareUrl} is not on the site`);
    other = await context.newPage();
    await other.goto(shareUrl);
    await waitReady(other);
    assert.deepEqual(JSON.parse(await requestText(other)), JSON.parse(firstRequest),
                     'the shared page sent a different request');
    const rows = await tableRows(other);
    const key = (rs) => rs.map(({ gpu, count, bytes }) => ({ gpu, count, bytes }));
    assert.deepEqual(key(rows), key(firstRows), 'the shared page shows a different table');
  });
  await other?.close();
});

test('language switch', { timeout: kTestTimeout }, () =>
  check('d-language', () => page, async () => {
  const label = () => page.locator('label[for="kind"]').innerText();
  const english = await label();
  await setLang(page, 'zh-CN');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN', null, { polling: 50 });
  await page.waitForFunction((en) => document.querySelector('label[for="kind"]')?.innerText !== en,
                             english, { polling: 50 });
  const chinese = await label();
  assert.notEqual(chinese, english);
  assert.match(chinese, /[\u3400-\u9fff]/, `label "${chinese}" has no CJK character`);
  await page.reload();
  await waitReady(page);
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN',
               'zh-CN was not remembered across a reload');
  assert.equal(await page.inputValue('#lang'), 'zh-CN');
  assert.equal(await label(), chinese);
  await setLang(page, 'en');
  await page.waitForFunction(() => document.documentElement.lang === 'en', null, { polling: 50 });
  assert.equal(await label(), english);
}));

test('embed mode', { timeout: kTestTimeout }, async () => {
  let host;
  await check('e-embed', () => host, async () => {
    assert.ok(firstRequest, 'needs a share link from the previous tests');
    await page.click('#share');
    await page.waitForFunction(() => document.querySelector('#share-url')?.value, null, { polling: 50 });
    const hash = new URL(await page.inputValue('#share-url')).hash;
    host = await context.newPage();
    await host.goto(url);
    await waitReady(host);
    const heights = await host.evaluate((src) => new Promise((ok) => {
      const frame = document.createElement('iframe');
      frame.id = 'embed-under-test';
      frame.style.width = '800px';
      const seen = [];
      const done = () => ok(seen);
      window.addEventListener('message', (e) => {
        if (e.source !== frame.contentWindow || e.data?.type !== 'gpuplan:height') return;
        seen.push(e.data.height);
        if (typeof e.data.height === 'number' && e.data.height > 100) done();
      });
      setTimeout(done, 20_000);
      frame.src = src;
      document.body.append(frame);
    }), `?embed=1${hash}`);
    assert.ok(heights.length > 0, 'the embedded page posted no gpuplan:height message');
    const height = heights.at(-1);
    assert.equal(typeof height, 'number', `height ${JSON.stringify(heights)}`);
    assert.ok(height > 100, `heights posted: ${JSON.stringify(heights)}`);
    const frame = host.frames().find((f) => f.url().includes('embed=1'));
    assert.ok(frame, 'no embed frame');
    await frame.waitForSelector('body[data-status="ready"]');
    assert.equal(await frame.evaluate(() => document.body.classList.contains('embed')), true,
                 'body has no "embed" class inside the frame');
    // Compact: three recommendations at most, no tools or detail, about one
    // screen tall at 800 px, and the way to the full planner on the same request.
    const visibleRows = await frame.$$eval('#results tbody tr',
      (trs) => trs.filter((tr) => getComputedStyle(tr).display !== 'none').length);
    assert.ok(visibleRows >= 1 && visibleRows <= 3, `${visibleRows} rows in the embed`);
    assert.equal(await frame.isVisible('#tools'), false);
    const compact = await frame.evaluate(() => Math.ceil(document.body.getBoundingClientRect().height));
    assert.ok(compact < 1300, `the embed is ${compact} px tall`);
    const full = await frame.getAttribute('#embed-full', 'href');
    assert.ok(full && !full.includes('embed=1') && full.includes(hash), full);
  });
  await host?.close();
  // &view=result: the link's result, frozen, without the form.
  const frozen = await context.newPage();
  await check('e-embed-result', () => frozen, async () => {
    const hash = new URL(await page.inputValue('#share-url')).hash;
    await frozen.goto(`${url}?view=result${hash}`);
    await waitReady(frozen);
    assert.equal(await frozen.isVisible('#form'), false, 'the form is shown in view=result');
    assert.ok(await frozen.locator('#results tbody tr').count() >= 1);
    assert.ok(await frozen.isVisible('#embed-full'));
  });
  await frozen.close();
});

test('bad custom catalog shows its errors', { timeout: kTestTimeout }, () =>
  check('f-bad-catalog', () => page, async () => {
  await waitReady(page);
  const bad = '{"schema_version":1,"catalog_version":"x","gpus":[{"id":"bad"}]}';
  await page.setInputFiles('#catalog-file',
                           { name: 'gpus.json', mimeType: 'application/json', buffer: Buffer.from(bad) });
  const errors = page.locator('#catalog-errors');
  await errors.waitFor({ state: 'visible' });
  await page.waitForFunction(() => document.querySelector('#catalog-errors')?.innerText.trim(), null,
                             { polling: 50 });
  const text = await errors.innerText();
  assert.ok(text.includes('/gpus/0'), `#catalog-errors does not name /gpus/0: ${text}`);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.status), null,
                             { polling: 50 });
  assert.notEqual(await status(page), 'error', 'the plan itself failed after a bad custom catalog');
  const rows = await tableRows(page);
  assert.ok(rows.length >= 1, 'no recommendations after a bad custom catalog');
  await assertPageMatchesCli(page);  // still the bundled catalog's answer
}));

test('bad input names the field', { timeout: kTestTimeout }, () =>
  check('g-bad-input', () => page, async () => {
  await setField(page, kSeqLen, '-4');
  // By its label, not its JSON pointer; the pointer is the line's title.
  await page.waitForFunction(() => document.querySelector('#errors')?.innerText.includes('Sequence length'), null,
                             { polling: 50 }).catch(() => {});
  const errors = await page.locator('#errors').innerText();
  assert.ok(errors.includes('Sequence length (tokens) — '), `#errors does not name seq_len: "${errors}"`);
  assert.ok(!errors.includes('/workload/'), `a JSON pointer on the page: "${errors}"`);
  assert.match(await page.getAttribute('#errors p', 'title'), /^\/workload\/seq_len: /);
  assert.ok(await page.locator('#errors').isVisible(), '#errors is not visible');
  const body = await page.evaluate(() => document.body.innerText);
  assert.ok(!/\bNaN\b/.test(body), 'the page shows NaN');
}));

test('a link from another catalog version says so; a good custom catalog by URL is used',
     { timeout: kTestTimeout }, () => check('h-catalog-versions', () => page, async () => {
  // {"cv":"1999.1","max_gpus":"8"}: made with a catalog this site never had.
  const code = Buffer.from('{"cv":"1999.1","max_gpus":"8"}').toString('base64url');
  await page.goto(`${url}#1.${code}`);
  await waitReady(page);
  const note = page.locator('#share-notice');
  assert.ok(await note.isVisible(), 'no notice for a link from another catalog version');
  assert.match(await note.innerText(), /1999\.1/);
  assert.equal(await page.inputValue(kMaxGpus), '8');
  // ?catalog= names a models.json-format file: the site's own, so the plan must not change.
  await page.goto(`${url}?catalog=catalog/models.json#1.${code}`);
  await page.waitForFunction(() => document.querySelector('#catalog-version')?.textContent
    .includes('catalog/models.json'), null, { polling: 50 });
  await waitReady(page);
  assert.equal((await page.locator('#catalog-errors').innerText()).trim(), '');
  await assertPageMatchesCli(page);
}));

test('serving, and a model given by its architecture numbers', { timeout: kTestTimeout }, () =>
  check('i-serving-architecture', () => page, async () => {
  await page.goto(url);
  await waitReady(page);
  let seq = await planSeq(page);
  await setField(page, '#kind', 'inference');
  seq = await waitPlanned(page, seq);
  assert.equal(await page.locator('#seq_len').isVisible(), false, 'a training field shows for serving');
  assert.equal(await page.locator('#concurrency').isVisible(), true);
  let { request } = await readPage(page);
  assert.equal(request.workload.kind, 'inference');
  await assertPageMatchesCli(page);
  // Llama 3.1 8B's shape given by hand (its config.json): the plan must equal the preset's.
  const presetRows = await tableRows(page);
  await page.click('#arch summary');
  for (const [id, v] of [['layers', 32], ['hidden', 4096], ['intermediate', 14336], ['heads', 32],
                         ['kv_heads', 8], ['vocab', 128256]]) {
    await setField(page, `#${id}`, v);
  }
  await waitPlanned(page, seq);
  ({ request } = await readPage(page));
  assert.deepEqual(request.model, { layers: 32, hidden: 4096, intermediate: 14336, heads: 32,
                                    kv_heads: 8, vocab: 128256 });
  await assertPageMatchesCli(page);
  const rows = await tableRows(page);
  assert.deepEqual(rows.map((r) => r.bytes), presetRows.map((r) => r.bytes),
                   'explicit Llama 3.1 8B numbers plan differently from the preset');
}));

test('an answer for an older input is never drawn over a newer input error', { timeout: kTestTimeout }, () =>
  check('j-race', () => page, async () => {
  await page.goto(url);
  await waitReady(page);
  const before = await planSeq(page);
  const good = await tableRows(page);
  // Two edits in one task: the first one's plan is still running when the second fails.
  await page.evaluate(() => {
    const input = document.getElementById('seq_len');
    input.value = '8192';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.value = 'abc';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction((b) => Number(document.body.dataset.planSeq) > b, before, { polling: 50 });
  await page.waitForTimeout(1500);  // long enough for the 8192 plan to come back
  assert.equal(await status(page), 'error');
  assert.match(await page.locator('#errors').innerText(), /Sequence length/);
  // The last good plan stays, marked stale; the 8192 answer never replaces it.
  assert.deepEqual(await tableRows(page), good, 'rows of the older input are shown');
  assert.equal(await page.evaluate(() => document.body.dataset.stale), 'true');
  assert.ok(await page.isVisible('#stale-note'));
  assert.equal(await page.getAttribute('#seq_len', 'aria-invalid'), 'true');
  // The error sits next to its field too.
  assert.match(await page.textContent('#error-seq_len'), /not a number|abc/);
  // A percentage is checked in the unit it was typed in.
  await setField(page, '#seq_len', '4096');
  await setField(page, '#headroom_pct', '1500');
  await page.waitForSelector('#error-headroom_pct');
  assert.match(await page.textContent('#error-headroom_pct'), /1500 %/);
  await setField(page, '#headroom_pct', '');
  await page.waitForFunction(() => document.body.dataset.stale === 'false', null, { polling: 50 });
}));

test('a damaged share link keeps the defaults and says so; the skip link keeps the link',
     { timeout: kTestTimeout }, () => check('k-damaged-link', () => page, async () => {
  await page.goto(`${url}?k#1.bnVsbA`);  // base64url of "null"
  await waitReady(page);
  assert.equal(await page.inputValue('#kind'), 'lora');
  assert.equal(await page.inputValue('#seq_len'), '4096');
  assert.match(await page.locator('#errors').innerText(), /share link/);
  // {"cv":"x","kind":"bogus"}: a value the form does not offer falls back and is reported.
  const bogus = Buffer.from('{"cv":"x","kind":"bogus"}').toString('base64url');
  await page.goto(`${url}?k2#1.${bogus}`);
  await waitReady(page);
  assert.equal(await page.inputValue('#kind'), 'lora');
  assert.match(await page.locator('#errors').innerText(), /kind: "bogus" is not one of the choices/);
  const seq = await planSeq(page);
  await setField(page, kMaxGpus, '4');
  await waitPlanned(page, seq);
  const hash = await shareLink(page);
  await page.focus('.skip');  // as a keyboard user does: it is off-screen until focused
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => location.hash), hash, 'the skip link replaced the share link');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'results-section');
}));

test('custom catalog parts combine; a bad one leaves the catalog in use', { timeout: kTestTimeout }, () =>
  check('l-custom-parts', () => page, async () => {
  const bundled = JSON.parse(await readFile('catalog/gpus.json', 'utf8'));
  const two = { ...bundled, catalog_version: 'two-cards', gpus: bundled.gpus.filter((g) =>
    ['h100-sxm-80gb', 'a100-sxm-80gb'].includes(g.id)) };
  const dir = await mkdtemp(path.join(tmpdir(), 'gpuplan-catalog-'));
  await writeFile(path.join(dir, 'gpus.json'), JSON.stringify(two));
  await copyFile('catalog/models.json', path.join(dir, 'models.json'));
  await page.goto(url);
  await waitReady(page);
  let seq = await planSeq(page);
  await page.setInputFiles('#catalog-file', { name: 'two.json', mimeType: 'application/json',
                                              buffer: Buffer.from(JSON.stringify(two)) });
  seq = await waitPlanned(page, seq);
  assert.match(await page.locator('#catalog-version').innerText(), /two-cards \(gpus: two\.json\)/);
  const bad = '{"schema_version":1,"models":[{"id":"x"}]}';
  await page.setInputFiles('#catalog-file', { name: 'bad-models.json', mimeType: 'application/json',
                                              buffer: Buffer.from(bad) });
  await page.waitForFunction(() => document.querySelector('#catalog-errors').innerText.includes('bad-models'),
                             null, { polling: 50 });
  await setField(page, kMaxGpus, '16');
  await waitPlanned(page, seq);
  const { text, request, rows } = await readPage(page);
  assert.ok(rows.length >= 1 && rows.length <= 2, `${rows.length} rows from a two-card catalog`);
  assertMatchesCli(rows, cliPlan(text, dir), request);
  // The link cannot carry a catalog from a file: the sender is told at copy time, with the
  // alternative.
  assert.equal(await page.isHidden('#share-note'), true);
  await page.click('#share');
  assert.match(await page.textContent('#share-note'), /gpus.*\?catalog=URL/);
  await rm(dir, { recursive: true, force: true });
}));

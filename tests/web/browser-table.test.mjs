// SPDX-License-Identifier: MIT
// The recommendations table as the engine ranks it: golden share links, batch and headroom in the
// memory cell, sorting, engine strings as text, rank codes, levers and rejections, advanced fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  assertMatchesCli,
  assertMemoryMatchesCli,
  check,
  cli,
  cliPlan,
  context,
  gib,
  kMaxGpus,
  kSeqLen,
  kTestTimeout,
  memoryCells,
  nativeCli,
  page,
  planSeq,
  readPage,
  requestText,
  setField,
  setLang,
  shareLink,
  tableRows,
  url,
  waitPlanned,
  waitReady,
} from './harness.mjs';

// Links that never rot. Saved links rebuild their saved request and rows; a link from
// another engine version says so.
test('golden share links reproduce their request and numbers', { timeout: kTestTimeout }, () =>
  check('o-golden-links', () => page, async () => {
  const golden = JSON.parse(await readFile('tests/web/golden-links.json', 'utf8'));
  for (const link of golden.links.filter((l) => /serving|calibrated/.test(l.name))) {
    await page.goto(`${url}${link.hash}`);
    await waitReady(page);
    assert.deepEqual(JSON.parse(await requestText(page)), link.request, link.name);
    const rows = (await tableRows(page)).slice(0, link.rows.length);
    assert.deepEqual(rows.map((r) => [r.gpu, Number(r.count), Number(r.bytes)]),
      link.rows.map((r) => [r.gpu, r.count, r.total_bytes]), link.name);
    rows.forEach((r, i) => {
      const want = link.rows[i].time_s ?? link.rows[i].decode_tokens_per_s_total;
      const got = Number(r.seconds ?? r.throughput);
      assert.ok(Math.abs(got - want) <= 1e-9 * want, `${link.name} row ${i}: ${got} vs ${want}`);
    });
    assert.ok(await page.isHidden('#share-notice'), `${link.name}: a notice for a same-version link`);
  }
  // The same link from an older engine: the page plans it and says the numbers may differ.
  const { hash } = golden.links[0];
  const raw = JSON.parse(Buffer.from(hash.slice(3).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString());
  const older = `#1.${Buffer.from(JSON.stringify({ ...raw, ev: '0.0.1' })).toString('base64url')}`;
  await page.goto(`${url}?older=1${older}`);
  await waitReady(page);
  assert.deepEqual(JSON.parse(await requestText(page)), golden.links[0].request);
  assert.match(await page.textContent('#share-notice'), /0\.0\.1/);
}));

// The global batch (in tokens or sequences), the headroom and the chunked-loss
// switch reach the request, show the CLI's figures, and ride the share link.
test('global batch, headroom and chunked loss: the request, the memory cell = the CLI, the link',
     { timeout: kTestTimeout }, async () => {
  let other;
  await check('y-batch-headroom', () => other ?? page, async () => {
    await page.goto(`${url}?issue15=1`);
    await waitReady(page);
    let { text } = await readPage(page);
    assertMemoryMatchesCli(await memoryCells(page), cliPlan(text), 20);
    assert.equal(await page.getAttribute('#headroom_pct', 'placeholder'), '20', 'the engine\'s default headroom');
    let seq = await planSeq(page);
    await setField(page, '#kind', 'pretrain');
    await setField(page, kSeqLen, '4096');
    await setField(page, '#global_batch_unit', 'tokens');
    await setField(page, '#global_batch', '1000000');  // / 4096 = 244.1: 244 sequences
    await setField(page, '#headroom_pct', '30');
    await page.check('#chunked_loss');
    seq = await waitPlanned(page, seq);
    let request;
    ({ text, request } = await readPage(page));
    assert.equal(request.workload.global_batch, 244, text);
    assert.equal(request.headroom, 0.3, text);
    assert.deepEqual(request.memory_techniques, { chunked_loss: true }, text);
    const cli = cliPlan(text);
    assert.equal(cli.request_normalized.headroom, 0.3);
    assertMemoryMatchesCli(await memoryCells(page), cli, 30);
    assertMatchesCli(await tableRows(page), cli, request);
    assert.equal(await page.textContent('#global_batch_hint'), '= 244 sequences sent');
    // The link carries the three fields to another tab, which sends the same request.
    const link = await shareLink(page);
    other = await context.newPage();
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.equal(await other.inputValue('#global_batch'), '1000000');
    assert.equal(await other.inputValue('#global_batch_unit'), 'tokens');
    assert.equal(await other.inputValue('#headroom_pct'), '30');
    assert.equal(await other.isChecked('#chunked_loss'), true);
    assert.deepEqual(JSON.parse(await requestText(other)), request);
    await other.close();
    other = undefined;
    // Switching the unit keeps the meaning: 1,000,000 tokens are 244 sequences.
    await setField(page, '#global_batch_unit', '');
    seq = await waitPlanned(page, seq);
    assert.equal(await page.inputValue('#global_batch'), '244');
    assert.equal((await readPage(page)).request.workload.global_batch, 244);
    // Empty: the engine's default, shown as the placeholder (request_normalized's, when it has one).
    await setField(page, '#global_batch', '');
    seq = await waitPlanned(page, seq);
    ({ text, request } = await readPage(page));
    assert.equal('global_batch' in request.workload, false, text);
    const gb = cliPlan(text).request_normalized.workload.global_batch;
    assert.equal(await page.getAttribute('#global_batch', 'placeholder'), gb == null ? 'auto' : String(gb));
    // A batch under one sequence names its field.
    await setField(page, '#global_batch_unit', 'tokens');
    await setField(page, '#global_batch', '100');
    await page.waitForFunction(() => document.body.dataset.status === 'error', null, { polling: 50 });
    assert.match(await page.textContent('#errors'), /Global batch/);
    assert.equal(await page.getAttribute('#global_batch', 'aria-invalid'), 'true');
  });
  await other?.close();
});

// The first option is the engine's first for the objective, however the table
// is sorted; the procurement sheet names it.
test('sorting a column never changes the first option the sheet names', { timeout: kTestTimeout }, () =>
  check('z-sort-first', () => page, async () => {
  await page.goto(`${url}?sort=1`);
  await waitReady(page);
  const { text } = await readPage(page);
  const cli = cliPlan(text);
  const engineFirst = cli.recommendations[0];
  // A column whose sort puts another card on top (cost, then power, then memory, descending).
  let sorted = null;
  for (const key of ['cost', 'power', 'memory', 'count']) {
    for (let n = 0; n < 2 && !sorted; ++n) {
      await page.click(`th button[data-sort="${key}"]`);
      const top = await page.getAttribute('#results tbody tr[data-gpu]', 'data-gpu');
      if (top !== engineFirst.gpu) sorted = key;
    }
    if (sorted) break;
  }
  assert.ok(sorted, 'no column sorts another card first');
  assert.equal(await page.getAttribute('#results tbody tr[data-first="true"]', 'data-gpu'), engineFirst.gpu);
  assert.equal(await page.locator('#results tbody tr[data-first="true"]').count(), 1);
  assert.match(await page.textContent('#results tbody tr[data-first="true"] .rank'), /^first choice · /);
  await page.selectOption('#export-format', 'sheet-md');
  await page.click('#export');
  await page.waitForFunction(() => document.querySelector('#export-out').value.startsWith('# GPU'));
  const sheet = await page.inputValue('#export-out');
  const names = new Map(JSON.parse(spawnSync(nativeCli, ['catalog', '--gpus'], { encoding: 'utf8' }).stdout)
    .gpus.map((g) => [g.id, g.name.replace(/[|[\]\\`*_!#]/g, (x) => `\\${x}`)]));
  const options = sheet.split('## Recommended options')[1].split('\n').filter((l) => /^\| (?!Card|---)/.test(l));
  assert.deepEqual(options.map((l) => l.split(' | ')[0].slice(2)),
    cli.recommendations.slice(0, 3).map((r) => names.get(r.gpu)), `sorted by ${sorted}`);
  const need = engineFirst.estimate.memory.total_with_headroom_bytes / 2 ** 30;
  assert.ok(sheet.includes(`at least ${Math.ceil(need)} GiB (the first option needs ${Number(need.toFixed(1))
    .toLocaleString('en')} GiB with 20% headroom)`), sheet.slice(0, 1500));
  await page.selectOption('#export-format', 'md');
}));

// The engine's strings (rank reason, an unknown rank code, almost-fit levers,
// a rejection's reason) are drawn as text; known codes get the page's words; each band is the
// band of the figure it is drawn with.
test('engine strings stay text; rank and lever codes are worded; a band sits with its own figure',
     { timeout: kTestTimeout }, () => check('za-engine-strings', () => page, async () => {
  await page.goto(`${url}?strings=1`);
  await waitReady(page);
  const evil = '<img src=x onerror="window.__pwned=1">';
  // A recommendation as the engine will send it, with hostile text in every string.
  const { text } = await readPage(page);
  const real = cliPlan(text).recommendations[0];
  const hostile = { ...real, rank_code: 'no_such_code', rank_reason: `${evil} reason`,
    almost_fits: { count: 1, total_with_headroom_bytes: 9e10, capacity_bytes: 8.5e10,
      levers: [{ code: 'chunked_loss', change: { path: '/memory_techniques/chunked_loss', value: true }, saved_bytes: 6e9,
        fits: true, time_factor: 1.05, cost: `${evil} cost` },
      { code: evil, change: { path: `/x/${evil}`, value: evil }, saved_bytes: 1e9, fits: true, time_factor: 0, cost: '' }] },
    fewest_cards: { count: 2, parallel: { gpus: 2, tp: 1, pp: 1, zero: 1, micro_batch: 1, grad_accum: 1, recompute: 'selective' },
      time_s: 86400 * 3, usd_total: null } };
  const known = { ...real, rank_code: 'fewest_cards_then_cost', rank_reason: 'engine words' };
  const shown = await page.evaluate(async ([h, k, evilText]) => {
    const { renderTable, renderDetail, summarize, rejectionText } = await import('./render.js');
    const tbody = document.createElement('tbody');
    renderTable(tbody, [h, k].map((rec) => ({ rec, summary: summarize(rec) })), true, () => {}, h);
    document.querySelector('#results').append(tbody);
    const detail = document.querySelector('#detail');
    renderDetail(detail, h);
    const rows = [...tbody.querySelectorAll('tr')].map((tr) => ({
      rank: tr.querySelector('.rank').textContent, title: tr.querySelector('.rank').title,
      almost: tr.querySelector('.almost')?.textContent ?? null, fewest: tr.querySelector('.fewest')?.textContent ?? null,
    }));
    const reject = rejectionText({ gpu: 'x', code: 'no_such_code', reason: evilText, params: {} });
    const markup = tbody.querySelectorAll('img, script').length + detail.querySelectorAll('img, script').length;
    const levers = [...detail.querySelectorAll('#almost-fits li')].map((li) => li.textContent);
    const box = !detail.querySelector('#almost-fits-box').hidden;
    tbody.remove();
    detail.hidden = true;
    return { rows, reject, markup, levers, box };
  }, [hostile, known, evil]);
  assert.equal(shown.markup, 0, 'an engine string became markup');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // An unknown code falls back to the engine's reason, as text.
  assert.equal(shown.rows[0].rank, `first choice · ${evil} reason`);
  assert.equal(shown.rows[0].title, `${evil} reason`);
  assert.equal(shown.rows[1].rank, 'the fewest cards that fit with headroom, then the cheapest run');
  assert.equal(shown.rows[1].title, 'engine words');
  // A known lever is worded with its time cost; an unknown one shows the field it changes.
  // (the field by its name, not its pointer)
  assert.equal(shown.rows[0].almost, `Fits on 1 card(s) with any one of: chunked loss (time ×1.05), ${evil.replace(/_/g, ' ')} = ${evil}`);
  assert.equal(shown.rows[0].fewest, `fewest cards: 2 × ${real.estimate.gpu.name}, 3.0 d`);
  assert.equal(shown.rows[1].almost, null);
  assert.equal(shown.rows[1].fewest, null, 'fewest cards shows beside the first option only');
  assert.ok(shown.box, 'the detail view lists the almost-fit levers');
  assert.deepEqual(shown.levers, [`chunked loss: saves 5.6 GiB, time ×1.05 — ${evil} cost`,
    `${evil.replace(/_/g, ' ')} = ${evil}: saves 0.9 GiB, time cost not estimated`]);
  assert.equal(shown.reject, `x: ${evil}`, 'a rejection without words for its code shows the engine\'s reason');

  // Every band drawn is the band of the figure just before it, and equals the CLI's: training
  // and serving (whose throughput cell also shows TTFT and TPOT).
  for (const kind of ['lora', 'inference']) {
    const seq = await planSeq(page);
    await setField(page, '#kind', kind);
    await waitPlanned(page, seq);
    const cli = cliPlan((await readPage(page)).text);
    const bands = await page.$$eval('#results tbody tr[data-gpu] .band', (spans) => spans.map((s) => ({
      gpu: s.closest('tr').dataset.gpu, path: s.dataset.band, low: Number(s.dataset.low), high: Number(s.dataset.high),
      figure: s.previousElementSibling?.dataset.figure ?? null,
    })));
    assert.ok(bands.length > 0, `${kind}: no bands drawn`);
    for (const b of bands) {
      assert.equal(b.figure, b.path, `${kind} ${b.gpu}: a band of ${b.path} is drawn with ${b.figure}`);
      const want = cli.recommendations.find((r) => r.gpu === b.gpu).estimate.bands[b.path];
      assert.deepEqual([b.low, b.high], [want.low, want.high], `${kind} ${b.gpu} ${b.path}`);
    }
  }
}));

// On the engine's own answers: each row's rank code in the page's words, the
// almost-fit levers in the row and the detail view, fewest cards beside the first pretraining
// option, and rejections: the engine's reason in English, the page's words with the
// rejection's numbers in Chinese.
test('rank codes, almost-fit levers, fewest cards and rejections as the CLI gives them',
     { timeout: kTestTimeout }, () => check('zb-rank-almost', () => page, async () => {
  const { kLanguages } = await import('../../web/i18n.js');
  const en = kLanguages.en;
  await page.goto(`${url}?rank=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  await setField(page, '#kind', 'full_finetune');
  await setField(page, '#model', 'llama-3.1-70b');
  await setField(page, kMaxGpus, '16');
  await page.evaluate(() => document.activeElement?.blur());  // its change fires now, not on a later click
  seq = await waitPlanned(page, seq);
  let cli = cliPlan((await readPage(page)).text);
  const rows = await page.$$eval('#results tbody tr[data-gpu]', (trs) => trs.map((tr) => ({
    gpu: tr.dataset.gpu, code: tr.querySelector('.rank').dataset.rankCode, rank: tr.querySelector('.rank').textContent,
    title: tr.querySelector('.rank').title, almost: tr.querySelector('.almost')?.dataset.count ?? null,
  })));
  assert.equal(rows.length, cli.recommendations.length);
  rows.forEach((row, i) => {
    const rec = cli.recommendations[i];
    assert.equal(row.code, rec.rank_code, row.gpu);
    assert.equal(row.title, rec.rank_reason, row.gpu);
    assert.equal(row.rank, `${i === 0 ? `${en.first_choice} · ` : ''}${en[`rank_${rec.rank_code}`]}`, row.gpu);
    assert.equal(row.almost, rec.almost_fits ? String(rec.almost_fits.count) : null, row.gpu);
  });
  const at = cli.recommendations.findIndex((r) => r.almost_fits);
  assert.ok(at >= 0, 'this request has an almost-fit (the test needs one)');
  await page.click(`#results tbody tr:nth-child(${at + 1}) button.detail`);
  const levers = await page.$$eval('#almost-fits li', (lis) => lis.map((li) => li.dataset.code));
  assert.deepEqual(levers, cli.recommendations[at].almost_fits.levers.map((l) => l.code));
  assert.ok(await page.isVisible('#almost-fits-box'));
  // Rejections: English shows the engine's reason; Chinese words the code with its numbers.
  assert.ok(cli.rejected.length > 0, 'this request rejects cards (the test needs one)');
  // English words the code too (the engine's reason names request fields);
  // the engine's reason stays the title.
  const shownRejected = () => page.$$eval('#rejected li', (lis) => lis.map((li) => [li.dataset.code, li.textContent]));
  const memory = cli.rejected.findIndex((r) => r.code === 'exceeds_memory' && r.params.need_bytes > 0);
  assert.ok(memory >= 0);
  const p = cli.rejected[memory].params;
  const enRejected = await shownRejected();
  assert.deepEqual(enRejected.map(([code]) => code), cli.rejected.map((r) => r.code));
  assert.deepEqual(await page.$$eval('#rejected li', (lis) => lis.map((li) => li.title)), cli.rejected.map((r) => r.reason));
  assert.equal(enRejected[memory][1], `${cli.rejected[memory].gpu}: does not fit even on ${p.max_gpus} cards: the closest ` +
    `setup needs ${gib(p.need_bytes)} per card with headroom; this card has ${gib(p.capacity_bytes)}`);
  await setLang(page, 'zh-CN');
  const zh = await shownRejected();
  assert.equal(zh[memory][1], `${cli.rejected[memory].gpu}: 最多 ${p.max_gpus} 张卡也放不下：最接近的配置每卡需要 ` +
    `${gib(p.need_bytes)}（含余量），此卡只有 ${gib(p.capacity_bytes)}`);
  await setLang(page, 'en');

  // Pretraining without a deadline: the fewest-cards setup beside the first option only.
  await setField(page, '#kind', 'pretrain');
  await setField(page, '#model', 'llama-3.2-1b');
  await setField(page, '#tokens', '1e9');
  seq = await waitPlanned(page, seq);
  cli = cliPlan((await readPage(page)).text);
  const first = cli.recommendations[0];
  assert.ok(first.fewest_cards, 'pretraining without a deadline gives fewest_cards');
  const fewest = await page.$$eval('#results tbody tr[data-gpu] .fewest', (spans) => spans.map((s) => [s.closest('tr').dataset.gpu, s.textContent]));
  const days = (s) => (s < 90 ? `${s.toFixed(0)} s` : s < 5400 ? `${(s / 60).toFixed(0)} min`
    : s < 172800 ? `${(s / 3600).toFixed(1)} h` : `${(s / 86400).toFixed(1)} d`);
  const cost = first.fewest_cards.usd_total == null ? '' : `, $${first.fewest_cards.usd_total < 100
    ? first.fewest_cards.usd_total.toFixed(2) : Math.round(first.fewest_cards.usd_total).toLocaleString('en')}`;
  assert.deepEqual(fewest, [[first.gpu, `fewest cards: ${first.fewest_cards.count} × ${first.estimate.gpu.name}, ` +
    `${days(first.fewest_cards.time_s)}${cost}`]]);
  // The engine's default global batch is the placeholder.
  assert.equal(await page.getAttribute('#global_batch', 'placeholder'),
    String(cli.request_normalized.workload.global_batch));
}));

// The contract's second-round training fields in the advanced group reach the
// request only when set, show the CLI's memory figures, ride the share link, and stay out of
// serving; each "engine default" names the value request_normalized reports.
test('advanced training fields: the request, the memory cell = the CLI, the link, serving',
     { timeout: kTestTimeout }, async () => {
  let other;
  await check('zc-advanced', () => other ?? page, async () => {
    await page.goto(`${url}?issue16=1`);
    await waitReady(page);
    assert.equal(await page.isVisible('#advanced'), true, 'training shows the advanced group');
    assert.equal(await page.getAttribute('#advanced', 'open'), null, 'the advanced group starts closed');
    let { text, request } = await readPage(page);
    for (const k of ['parallel', 'memory_techniques']) assert.equal(k in request, false, text);
    assert.deepEqual(request.precision, { weights: 'bf16' });
    let cli = cliPlan(text);
    const firstOption = (id) => page.$eval(`#${id}`, (s) => s.options[0].textContent);
    const word = (v) => (v ? 'on' : 'off');
    assert.equal(await firstOption('optimizer_states'), cli.request_normalized.precision.optimizer_states === 'param'
      ? 'engine default (the parameters\' dtype)' : `engine default (${cli.request_normalized.precision.optimizer_states})`);
    assert.equal(await firstOption('overlap_tp_comm'),
      `engine default (${word(cli.request_normalized.parallel.overlap.tp_comm)})`);
    let seq = await planSeq(page);
    await setField(page, '#kind', 'pretrain');
    await setField(page, '#model', 'llama-3.2-1b');
    await setField(page, '#tokens', '1e9');
    await page.click('#advanced summary');
    assert.equal(await page.isVisible('#recompute_every'), false, 'n only for every_n_layers');
    assert.equal(await page.isVisible('#virtual_stages'), false, 'v only for interleaved');
    await setField(page, '#optimizer_states', 'bf16');
    await page.check('#compile');
    await setField(page, '#recompute', 'every_n_layers');
    assert.equal(await page.isVisible('#recompute_every'), true);
    await setField(page, '#recompute_every', '2');
    await setField(page, '#pp_schedule', 'interleaved');
    assert.equal(await page.isVisible('#virtual_stages'), true);
    await setField(page, '#virtual_stages', '2');
    await setField(page, '#overlap_tp_comm', 'on');
    await setField(page, '#overlap_grad_reduce', 'off');
    seq = await waitPlanned(page, seq);
    ({ text, request } = await readPage(page));
    assert.deepEqual(request.precision, { weights: 'bf16', optimizer_states: 'bf16' }, text);
    assert.deepEqual(request.memory_techniques, { compile: true, recompute: 'every_n_layers', recompute_every: 2 }, text);
    assert.deepEqual(request.parallel, { pp_schedule: 'interleaved', virtual_stages: 2,
      overlap: { tp_comm: true, grad_reduce: false } }, text);
    cli = cliPlan(text);
    assert.equal(cli.request_normalized.memory_techniques.recompute_every, 2);
    assertMemoryMatchesCli(await memoryCells(page), cli, 20);
    assertMatchesCli(await tableRows(page), cli, request);
    // A field the user set: the answer holds the user's value, so its default stays unnamed;
    // one left at default names the engine's.
    assert.equal(await firstOption('overlap_tp_comm'), 'engine default');
    assert.equal(await firstOption('overlap_param_gather'),
      `engine default (${word(cli.request_normalized.parallel.overlap.param_gather)})`);
    // The states' choice moves the figure the page shows: fp32 moments hold more than bf16.
    await setField(page, '#optimizer_states', 'fp32');
    seq = await waitPlanned(page, seq);
    ({ text, request } = await readPage(page));
    const fp32 = cliPlan(text);
    assertMemoryMatchesCli(await memoryCells(page), fp32, 20);
    const [a, b] = [cli, fp32].map((c) => c.recommendations[0]);
    if (a.gpu === b.gpu && JSON.stringify(a.parallel) === JSON.stringify(b.parallel)) {
      const states = (r) => r.estimate.memory.per_gpu_bytes.optimizer_states;
      assert.ok(states(b) > states(a), `fp32 moments ${states(b)} vs bf16 ${states(a)}`);
    }
    // The link carries them to another tab, which sends the same request.
    const link = await shareLink(page);
    other = await context.newPage();
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.equal(await other.inputValue('#optimizer_states'), 'fp32');
    assert.equal(await other.isChecked('#compile'), true);
    assert.equal(await other.inputValue('#recompute'), 'every_n_layers');
    assert.equal(await other.inputValue('#recompute_every'), '2');
    assert.equal(await other.inputValue('#pp_schedule'), 'interleaved');
    assert.equal(await other.inputValue('#virtual_stages'), '2');
    assert.equal(await other.inputValue('#overlap_tp_comm'), 'on');
    assert.equal(await other.inputValue('#overlap_grad_reduce'), 'off');
    assert.equal(await other.inputValue('#overlap_param_gather'), '');
    assert.deepEqual(JSON.parse(await requestText(other)), request);
    await other.close();
    other = undefined;
    // every_n_layers without n: the engine's error names the field, and the group stays open.
    await setField(page, '#recompute_every', '');
    await page.waitForFunction(() => document.body.dataset.status === 'error', null, { polling: 50 });
    assert.match(await page.textContent('#errors'), /n \(every n-th layer recomputed\)/);
    assert.equal(await page.getAttribute('#recompute_every', 'aria-invalid'), 'true');
    // In Chinese the defaults are named in Chinese.
    seq = await planSeq(page);
    await setField(page, '#recompute', '');
    seq = await waitPlanned(page, seq);
    cli = cliPlan((await readPage(page)).text);
    await setLang(page, 'zh-CN');
    assert.equal(await firstOption('overlap_param_gather'),
      `引擎默认（${cli.request_normalized.parallel.overlap.param_gather ? '开' : '关'}）`);
    await setLang(page, 'en');
    // Serving: the group is hidden and none of it is sent.
    await setField(page, '#kind', 'inference');
    seq = await waitPlanned(page, seq);
    ({ text, request } = await readPage(page));
    assert.equal(await page.isVisible('#advanced'), false);
    for (const k of ['parallel', 'memory_techniques']) assert.equal(k in request, false, text);
    assert.deepEqual(request.precision, { weights: 'bf16' }, text);
  });
  await other?.close();
});

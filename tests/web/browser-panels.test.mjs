// SPDX-License-Identifier: MIT
// The panels beside the table: wait or switch and the procurement sheet, the fleet, a framework
// profile, the market, traffic sizing; each equal to its CLI command and kept in the share link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import {
  assertMatchesCli,
  check,
  cli,
  cliPlan,
  context,
  fleetReady,
  kTestTimeout,
  nativeCli,
  page,
  planSeq,
  readPage,
  setField,
  setLang,
  shareLink,
  tableRows,
  url,
  waitPlanned,
  waitReady,
} from './harness.mjs';

// In the page, a queue for the best card gives the CLI's wait-or-switch verdict, and
// the procurement sheet lists the plan's first option.
test('wait or switch, and the procurement sheet, from the page\'s plan', { timeout: kTestTimeout }, () =>
  check('r-wait-sheet', () => page, async () => {
  await page.goto(`${url}?wait=1`);
  await waitReady(page);
  const first = (await tableRows(page))[0];
  let seq = await planSeq(page);
  await setField(page, '#waits', `${first.gpu}: 30`);
  seq = await waitPlanned(page, seq);
  const { text, request } = await readPage(page);
  assert.equal(request.constraints.wait_s[first.gpu], 30 * 86400, text);
  const want = cliPlan(text).wait_or_switch;
  assert.ok(await page.isVisible('#wait-section'));
  // The verdict is the page's words for its code, naming cards as the catalog does: the plan's
  // first card, 30 days away, against the first to finish now.
  const cards = JSON.parse(await readFile('catalog/gpus.json', 'utf8')).gpus;
  const cardName = (id) => cards.find((g) => g.id === id).name;
  assert.equal(want.verdict.code, 'switch_now');
  const d = (v) => `${(v / 86400).toFixed(1)} d`;
  const verdict = await page.textContent('#wait-verdict');
  assert.ok(verdict.startsWith(`take ${cardName(want.first_to_finish)}: it finishes in `), verdict);
  assert.ok(verdict.includes(`${d(want.verdict.params.saved_s)} before ${cardName(want.options[0].gpu)}`), verdict);
  await setLang(page, 'zh-CN');
  const zhVerdict = await page.textContent('#wait-verdict');
  assert.ok(zhVerdict.startsWith(`选 ${cardName(want.first_to_finish)}：`), zhVerdict);
  assert.ok(zhVerdict.includes(`比 ${cardName(want.options[0].gpu)} 早 ${(want.verdict.params.saved_s / 86400).toFixed(1)} 天`), zhVerdict);
  await setLang(page, 'en');
  const shown = await page.$$eval('#wait-table tbody tr', (trs) => trs.map((tr) => ({
    gpu: tr.dataset.gpu, first: tr.dataset.first === 'true',
    finish: Number(tr.querySelectorAll('td')[3].dataset.seconds),
  })));
  assert.deepEqual(shown.map((r) => r.gpu), want.options.map((o) => o.gpu));
  assert.deepEqual(shown.map((r) => r.finish), want.options.map((o) => o.finish_s));
  assert.equal(shown.find((r) => r.first)?.gpu, want.first_to_finish);
  // Rows name cards as the catalog does, not by id.
  const bundledCards = JSON.parse(await readFile('catalog/gpus.json', 'utf8')).gpus;
  assert.deepEqual(await page.$$eval('#wait-table tbody th', (ths) => ths.map((th) => th.textContent)),
    want.options.map((o) => bundledCards.find((g) => g.id === o.gpu).name));
  // A bad queue names its field.
  await setField(page, '#waits', 'h100: soon');
  await page.waitForFunction(() => document.body.dataset.status === 'error', null, { polling: 50 });
  assert.match(await page.textContent('#errors'), /Queues/);
  await setField(page, '#waits', '');
  await waitPlanned(page, seq);
  assert.ok(await page.isHidden('#wait-section'));

  await page.selectOption('#export-format', 'sheet-md');
  await page.click('#export');
  // The sheet's module is fetched on first use.
  await page.waitForFunction(() => document.querySelector('#export-out').value.startsWith('# GPU'));
  const sheet = await page.inputValue('#export-out');
  const cli = cliPlan((await readPage(page)).text);
  const name = JSON.parse(spawnSync(nativeCli, ['catalog', '--gpus'], { encoding: 'utf8' }).stdout)
    .gpus.find((g) => g.id === cli.recommendations[0].gpu).name;
  assert.match(sheet, /^# GPU procurement sheet/);
  assert.ok(sheet.includes(`| ${name} | ${cli.recommendations[0].count} |`), sheet.slice(0, 800));
  await page.selectOption('#export-format', 'sheet-html');
  await page.click('#export');
  await page.waitForFunction(() => document.querySelector('#export-out').value.startsWith('<!doctype'));
}));

// The fleet panel answers as gpuplan fleet does, and its request rides the share link.
test('the fleet panel equals gpuplan fleet and is kept in the share link', { timeout: kTestTimeout }, () =>
  check('s-fleet', () => page, async () => {
  await page.goto(`${url}?fleet=1`);
  await waitReady(page);
  await fleetReady(page);
  await page.click('#fleet-example');
  await page.click('#fleet-plan');
  await page.waitForSelector('#fleet-table tbody tr');
  const text = await page.inputValue('#fleet');
  const run = spawnSync(nativeCli, ['fleet', '-'], { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const want = JSON.parse(run.stdout);
  const shown = await page.$$eval('#fleet-table tbody tr', (trs) => trs.map((tr) => ({
    gpu: tr.dataset.gpu, owned: Number(tr.dataset.owned), share: tr.querySelector('[data-code]').dataset.code })));
  assert.deepEqual(shown, want.options.map((o) => ({ gpu: o.gpu, owned: o.owned_cards, share: o.share_pools.code })));
  // The share verdict and the fleet's advice are words, never the engine's codes, in English
  // and, planned again, in Chinese.
  const fleetText = () => page.evaluate(() => [...document.querySelectorAll('#fleet-table tbody td[data-code]')]
    .map((td) => td.textContent).concat([...document.querySelectorAll('#fleet-advice li')].map((li) => li.textContent)));
  const shares = { share_off_peak: 'share', keep_separate: 'keep separate', one_kind: 'one pool' };
  assert.deepEqual((await fleetText()).slice(0, want.options.length), want.options.map((o) => shares[o.share_pools.code]));
  await setLang(page, 'zh-CN');
  await page.click('#fleet-plan');
  await page.waitForFunction(() => /[\u4e00-\u9fff]/.test(document.querySelector('#fleet-table tbody td[data-code]')?.textContent ?? ''),
    null, { polling: 50 });
  for (const x of await fleetText()) {
    assert.doesNotMatch(x, /\b[a-z]+_[a-z_]+\b/, x);
    assert.match(x, /[\u4e00-\u9fff]/, x);
  }
  // Back in English the panel is drawn again in English, without planning again.
  await setLang(page, 'en');
  assert.deepEqual((await fleetText()).slice(0, want.options.length), want.options.map((o) => shares[o.share_pools.code]));
  // The share link carries the fleet text to another tab.
  const link = await shareLink(page);
  const other = await context.newPage();
  try {
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.equal(await other.inputValue('#fleet'), text);
    // ...and the form reads it back (a link holding a fleet loads the panel's module at once):
    // the example's three jobs, one row each.
    await other.waitForSelector('#fleet-section[data-ready]');
    assert.deepEqual(await other.$$eval('#fleet-rows tbody select', (s) => s.map((x) => x.value)),
      ['lora', 'offline', 'online']);
  } finally {
    await other.close();
  }
  // A broken fleet request names its field.
  await page.click('#fleet-json summary');
  await page.fill('#fleet', '{"workloads": []}');
  await page.click('#fleet-plan');
  await page.waitForFunction(() => document.querySelector('#fleet-errors').textContent.includes('/workloads'));
  // Text that is not JSON disables the form and says so, instead of dropping what was typed.
  await page.fill('#fleet', '{"workloads": [');
  assert.match(await page.textContent('#fleet-form-error'), /not a fleet request/);
  assert.ok(await page.isDisabled('#fleet-max'));
}));

// The fleet form builds the request without JSON: the six lines above become workloads, each
// row edits how often and how much, and the engine's errors point at the row's input.
test('the fleet form writes gpuplan fleet\'s request and marks the field an error names', { timeout: kTestTimeout },
  () => check('s-fleet-form', () => page, async () => {
  await page.goto(`${url}?fleet=2`);
  await waitReady(page);
  await fleetReady(page);
  await page.selectOption('#kind', 'lora');
  await page.click('#fleet-add');
  await page.fill('#fleet-rows tbody tr:nth-child(1) td:nth-child(4) input', '14');
  await page.dispatchEvent('#fleet-rows tbody tr:nth-child(1) td:nth-child(4) input', 'change');
  await page.selectOption('#kind', 'inference');
  await page.click('#fleet-add');
  // 24 hours: 2 users at night (0h-7h, 20h-23h), 12 by day.
  const hours = '2 2 2 2 2 2 2 2 12 12 12 12 12 12 12 12 12 12 12 12 2 2 2 2';
  const cell = (r, c) => `#fleet-rows tbody tr:nth-child(${r}) td:nth-child(${c}) input`;
  await page.fill(cell(2, 7), hours);
  await page.dispatchEvent(cell(2, 7), 'change');
  await page.fill('#fleet-max', '8');
  await page.dispatchEvent('#fleet-max', 'change');
  const request = JSON.parse(await page.inputValue('#fleet'));
  assert.equal(request.workloads.length, 2);
  assert.equal(request.workloads[0].every_days, 14);
  assert.equal(request.workloads[0].request.workload.kind, 'lora');
  assert.deepEqual(request.workloads[1].concurrency_by_hour, hours.split(' ').map(Number));
  assert.equal(request.workloads[1].every_days, undefined);
  assert.equal(request.constraints.max_gpus, 8);
  await page.click('#fleet-plan');
  await page.waitForSelector('#fleet-table tbody tr');
  const run = spawnSync(nativeCli, ['fleet', '-'], { input: await page.inputValue('#fleet'), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const shown = await page.$$eval('#fleet-table tbody tr', (trs) => trs.map((tr) => tr.dataset.gpu));
  assert.deepEqual(shown, JSON.parse(run.stdout).options.map((o) => o.gpu));
  // Switching the first job to an online service drops every_days and asks for the curve.
  await page.selectOption('#fleet-rows tbody tr:nth-child(1) select', 'online');
  const switched = JSON.parse(await page.inputValue('#fleet')).workloads[0];
  assert.equal(switched.every_days, undefined);
  assert.equal(switched.request.workload.kind, 'inference');
  assert.equal(switched.request.workload.seq_len, undefined);
  // A value the engine refuses marks that row's input.
  await page.fill(cell(2, 7), '2 2 2');
  await page.dispatchEvent(cell(2, 7), 'change');
  await page.click('#fleet-plan');
  await page.waitForFunction(() => document.querySelector('#fleet-errors').textContent.includes('/workloads/1/concurrency_by_hour'));
  assert.equal(await page.getAttribute(cell(2, 7), 'aria-invalid'), 'true');
  // Removing a row removes its workload.
  await page.click('#fleet-rows tbody tr:nth-child(1) button');
  assert.equal(JSON.parse(await page.inputValue('#fleet')).workloads.length, 1);
}));

// A serving engine chosen in the form reaches the engine, the table equals the
// CLI's plan for it, the detail view states the engine's KV pool as the CLI computes it, and a
// training purpose sends the choice back to generic.
test('a framework profile: same plan as the CLI, its KV pool in the detail view, kept in the link',
     { timeout: kTestTimeout }, () => check('t-framework', () => page, async () => {
  await page.goto(`${url}?fw=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  await setField(page, '#kind', 'inference');
  seq = await waitPlanned(page, seq);
  await setField(page, '#framework', 'vllm');
  seq = await waitPlanned(page, seq);
  const { text, request, rows } = await readPage(page);
  assert.equal(request.framework, 'vllm');
  const cli = cliPlan(text);
  assertMatchesCli(rows, cli, request);
  await page.click(`#results tbody tr[data-gpu="${rows[0].gpu}"] button.detail`);
  // The formulas come with the full estimate of the setup, which the detail asks for.
  await page.waitForSelector('#detail[data-full="true"]');
  const fw = cli.recommendations[0].estimate.framework;
  const line = await page.textContent('#detail-framework');
  // The plan's answer carries six significant digits (docs/contract.md, lean answers); the
  // detail view the exact count of the same setup.
  const pool = Number((/([\d,]+) tokens/.exec(line) ?? ['', 'NaN'])[1].replace(/,/g, ''));
  assert.ok(Math.abs(pool - fw.kv_pool_tokens) <= 5e-6 * fw.kv_pool_tokens, `${line} vs ${fw.kv_pool_tokens}`);
  assert.ok(line.startsWith('vLLM'), line);
  assert.match(await page.getAttribute('#detail-framework', 'title'), /share x the card's usable total/);
  // The engine's own settings reach the request under vLLM's names and move the
  // pool as the CLI moves it.
  await page.click('#engine-settings summary');
  await setField(page, '#srv_share', '0.8');
  await setField(page, '#srv_max_seqs', '64');
  seq = await waitPlanned(page, seq);
  const tuned = await readPage(page);
  assert.deepEqual(tuned.request.serving, { gpu_memory_utilization: 0.8, max_num_seqs: 64 });
  const tunedCli = cliPlan(tuned.text);
  assertMatchesCli(tuned.rows, tunedCli, tuned.request);
  assert.equal(tunedCli.request_normalized.serving.gpu_memory_utilization, 0.8);
  assert.ok(tunedCli.recommendations[0].estimate.framework.kv_pool_tokens < fw.kv_pool_tokens ||
            tunedCli.recommendations[0].gpu !== cli.recommendations[0].gpu);
  // The link carries the choice.
  const link = await shareLink(page);
  const other = await context.newPage();
  try {
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.equal(await other.inputValue('#framework'), 'vllm');
    assert.equal(await other.inputValue('#srv_share'), '0.8');
  } finally {
    await other.close();
  }
  // A training purpose cannot keep a serving engine.
  await setField(page, '#kind', 'lora');
  await waitPlanned(page, seq);
  assert.equal(await page.inputValue('#framework'), '');
  assert.equal((await readPage(page)).request.framework, undefined);
}));

// Prices by market: the plan for a buyer in China is the CLI's for pricing.market cn, each
// row's cost names its offer and reads in yuan, a row that is not freely sold says so on the
// row, and the choice is remembered in this browser and kept in the link.
test('the market: the CLI\'s plan for it, the offer named, yuan shown, remembered and linked',
     { timeout: kTestTimeout }, () => check('t-market', () => page, async () => {
  await page.goto(`${url}?market=1`);
  await waitReady(page);
  try {
    let seq = await planSeq(page);
    await setField(page, '#market', 'cn');
    seq = await waitPlanned(page, seq);
    const { text, request, rows } = await readPage(page);
    assert.deepEqual(request.pricing, { market: 'cn' });
    const cli = cliPlan(text);
    assertMatchesCli(rows, cli, request);
    const first = cli.recommendations[0];
    const offer = first.estimate.cost.offer;
    assert.equal(offer.market, 'cn');
    assert.equal(offer.currency, 'CNY');
    const cost = `#results tbody tr[data-gpu="${first.gpu}"] td[data-col="cost"]`;
    assert.ok((await page.getAttribute(cost, 'title')).includes(offer.provider));
    // The run's cost in yuan: usd_total x the offer's CNY price / its USD price.
    const c = first.estimate.cost;
    const yuan = (c.usd_total * offer.price) / c.usd_per_gpu_hour;
    const shown = yuan < 100 ? yuan.toFixed(2) : Math.round(yuan).toLocaleString('en');
    assert.ok((await page.textContent(cost)).includes(`¥${shown}`), await page.textContent(cost));
    // A card restricted from the market and rented from stock carries its caveat on the row.
    const caveated = cli.recommendations.slice(0, rows.length)
      .find((r) => (r.estimate.warnings ?? []).some((w) => w.code === 'card_restricted_in_market'));
    assert.ok(caveated, 'some row of the China plan is a card rented from stock');
    assert.match(await page.textContent(`#results tbody tr[data-gpu="${caveated.gpu}"] .caveat`), /since 20\d\d/);
    // Remembered: the page opened without a link plans for the same market.
    const again = await context.newPage();
    try {
      await again.goto(url);
      await waitReady(again);
      assert.equal(await again.inputValue('#market'), 'cn');
    } finally {
      await again.close();
    }
    // Kept in the link, whatever the opening browser remembers.
    const link = await shareLink(page);
    await page.evaluate(() => localStorage.setItem('gpuplan.market', ''));
    const other = await context.newPage();
    try {
      await other.goto(`${url}${link}`);
      await waitReady(other);
      assert.equal(await other.inputValue('#market'), 'cn');
    } finally {
      await other.close();
    }
  } finally {
    await page.evaluate(() => localStorage.removeItem('gpuplan.market'));
  }
}));

// A request rate on the inference form adds the traffic table, which is
// gpuplan traffic's answer for the same request, and the rate rides the share link.
test('the traffic table equals gpuplan traffic for the form and is kept in the link',
     { timeout: kTestTimeout }, () => check('w-traffic', () => page, async () => {
  await page.goto(`${url}?traffic=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  await setField(page, '#kind', 'inference');
  seq = await waitPlanned(page, seq);
  assert.ok(await page.isHidden('#traffic-section'));
  await page.click('#traffic-fields summary');
  await setField(page, '#tpot_ms', '50');
  seq = await waitPlanned(page, seq);
  await setField(page, '#prompt_p95', '6000');
  seq = await waitPlanned(page, seq);
  await setField(page, '#prefix_hit', '30');
  seq = await waitPlanned(page, seq);
  await setField(page, '#rps', '20');
  await waitPlanned(page, seq);
  await page.waitForSelector('#traffic-table tbody tr');
  const request = JSON.parse(await page.getAttribute('#traffic-section', 'data-request'));
  assert.deepEqual(request.traffic, { requests_per_s: 20, prompt_tokens: { mean: 1024, p95: 6000 },
    output_tokens: { mean: 256, p95: 256 }, prefix_cache_hit: 0.3 });
  const run = spawnSync(nativeCli, ['traffic', '-'], { input: JSON.stringify(request), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const cli = JSON.parse(run.stdout);
  const shown = await page.$$eval('#traffic-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.gpu, Number(tr.dataset.cards)]));
  assert.deepEqual(shown, cli.options.map((o) => [o.gpu, o.cards]));
  const link = await shareLink(page);
  const other = await context.newPage();
  try {
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.equal(await other.inputValue('#rps'), '20');
    await other.waitForSelector('#traffic-table tbody tr');
  } finally {
    await other.close();
  }
}));

// SPDX-License-Identifier: MIT
// The built page in headless Chromium, served with the production headers (scripts/serve.mjs):
// its table agrees with the native CLI on the exact request the page sent, inputs re-plan, share
// links round-trip, the language switch sticks, embed mode reports its height, and bad input
// (a broken custom catalog, a negative length) is named rather than shown as NaN.
// Env: GPUPLAN_SITE_DIR (build/site), GPUPLAN_NATIVE_CLI (build/native-release/bin/gpuplan),
//      CHROMIUM (/usr/bin/chromium), GPUPLAN_TEST_OUTPUT (build/test-output/web: screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launchChromium } from './chromium.mjs';

const siteDir = process.env.GPUPLAN_SITE_DIR || 'build/site';
const nativeCli = process.env.GPUPLAN_NATIVE_CLI || 'build/native-release/bin/gpuplan';
const outDir = process.env.GPUPLAN_TEST_OUTPUT || 'build/test-output/web';

const kTestTimeout = 90_000;
// The form's inputs the tests type into (the page's DOM contract, with #kind, #model, #weights,
// #tokens, #results, #request-json, #share, #share-url, #lang, #catalog-file, #catalog-errors
// and #errors, and body[data-status] / body[data-plan-seq]).
const kSeqLen = '#seq_len';
const kMaxGpus = '#max_gpus';
const kNodePower = '#node_power_w';

let server;
let url;
let context;
let closeBrowser;
let page;         // the main page; tests (a)-(d), (f), (g) run on it in order
let firstRequest; // (a)-(b)'s request and table, which (c) reopens from a share link
let firstRows;
const problems = [];  // console errors and page errors since the current test began

function watch(p) {
  p.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const where = msg.location()?.url ?? '';
    if (/favicon/i.test(where) && /404/.test(msg.text())) return;
    problems.push(`console error: ${msg.text()}${where ? ` (${where})` : ''}`);
  });
  p.on('pageerror', (err) => problems.push(`page error: ${err.stack || err.message || err}`));
  p.on('response', (res) => {
    // A 404 shows up as a bare "Failed to load resource" console error; name the file instead.
    if (res.status() >= 400 && !/favicon/i.test(res.url())) {
      problems.push(`HTTP ${res.status()} for ${res.url()}`);
    }
  });
}

before(async () => {
  if (!existsSync(path.join(siteDir, 'index.html'))) {
    throw new Error(`no built site at ${siteDir}/index.html: run bash scripts/build-site.sh, ` +
                    'or set GPUPLAN_SITE_DIR');
  }
  if (!existsSync(nativeCli)) throw new Error(`no native CLI at ${nativeCli}: set GPUPLAN_NATIVE_CLI`);
  await mkdir(outDir, { recursive: true });
  ({ server, url } = await serve(siteDir, { port: 0 }));
  ({ context, close: closeBrowser } = await launchChromium({ viewport: { width: 1280, height: 900 } }));
  context.setDefaultTimeout(20_000);
  context.on('page', watch);  // pages opened later; the one the browser starts with by hand
  page = context.pages()[0];
  if (page) watch(page);
  else page = await context.newPage();
});

after(async () => {
  await closeBrowser?.();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

// Runs one test body, then always saves a full-page screenshot of `shotPage()`; a test that
// passed fails if any console or page error appeared; a failing one lists them in its message.
async function check(name, shotPage, body) {
  problems.length = 0;
  let failure;
  try {
    await body();
  } catch (err) {
    failure = err;
  }
  const p = shotPage();
  if (p && !p.isClosed()) {
    await p.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true }).catch(() => {});
  }
  if (failure) {
    if (problems.length) failure.message += `\nconsole/page errors seen:\n  ${problems.join('\n  ')}`;
    throw failure;
  }
  assert.deepEqual(problems, [], 'console or page errors');
}

const planSeq = (p) => p.evaluate(() => Number(document.body.dataset.planSeq));
// The share link in the address, once the page has written it (web/main.js shareSoon: it
// follows the form when typing pauses).
async function shareLink(p) {
  await p.waitForFunction(() => document.body.dataset.share === 'written', null, { polling: 50 });
  return p.evaluate(() => location.hash);
}
const status = (p) => p.evaluate(() => document.body.dataset.status);

// Waits until the page has planned again (data-plan-seq above `before`) and is ready, and then
// until it stays that way for a moment, so that several quick input changes settle on the last.
async function waitPlanned(p, before, { timeout = 30_000 } = {}) {
  await p.waitForFunction(
    (prev) => Number(document.body.dataset.planSeq) > prev && document.body.dataset.status === 'ready',
    before, { timeout, polling: 50 });
  for (let last = await planSeq(p); ;) {
    await p.waitForTimeout(400);
    const now = await planSeq(p);
    if (now === last && (await status(p)) === 'ready') return now;
    last = now;
    await p.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout, polling: 50 });
  }
}

async function waitReady(p) {
  await p.waitForSelector('body[data-status="ready"]', { timeout: 30_000 });
  return waitPlanned(p, -Infinity);
}

// The language switch: another dictionary may be fetched first (i18n.js loadLanguage).
async function setLang(p, lang) {
  await p.selectOption('#lang', lang);
  await p.waitForFunction((l) => document.documentElement.lang === l, lang, { polling: 50 });
}

// Sets a form control as a user would: a <select> by value, anything else by typing; then an
// explicit change event, which a text input only fires on blur.
async function setField(p, selector, value) {
  const tag = await p.locator(selector).evaluate((el) => el.tagName);
  if (tag === 'SELECT') {
    await p.selectOption(selector, String(value));
  } else {
    await p.fill(selector, String(value));
  }
  await p.locator(selector).dispatchEvent('change');
}

async function requestText(p) {
  const text = (await p.locator('#request-json').textContent())?.trim() ?? '';
  assert.ok(text.length > 0, '#request-json is empty');
  return text;
}

async function tableRows(p) {
  return p.$$eval('#results tbody tr[data-gpu]', (trs) => trs.map((tr) => {
    const cell = (col) => tr.querySelector(`td[data-col="${col}"]`);
    return {
      gpu: tr.dataset.gpu,
      count: cell('count')?.textContent.trim() ?? null,
      bytes: cell('memory')?.getAttribute('data-bytes') ?? null,
      seconds: cell('time')?.getAttribute('data-seconds') ?? null,
      throughput: cell('time')?.getAttribute('data-value') ?? null,
    };
  }));
}

function cliPlan(text, catalogDir) {
  const args = catalogDir ? ['--catalog', catalogDir, 'plan', '-'] : ['plan', '-'];
  const run = spawnSync(nativeCli, args, { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, `native CLI failed on the page's request: ${run.stderr}\n${text}`);
  return JSON.parse(run.stdout);
}

// Every row the page shows is the CLI's recommendation at the same place.
function assertMatchesCli(rows, cli, request) {
  const recs = cli.recommendations;
  assert.ok(rows.length <= recs.length, `page shows ${rows.length} rows, CLI has ${recs.length}`);
  assert.deepEqual(rows.map((r) => r.gpu), recs.slice(0, rows.length).map((r) => r.gpu),
                   'GPU order differs from the CLI');
  const training = request.workload?.kind !== 'inference';
  rows.forEach((row, i) => {
    const rec = recs[i];
    const at = `row ${i} (${row.gpu})`;
    assert.match(row.count ?? '', /^\d+$/, `${at}: count cell text is not an integer`);
    assert.equal(Number(row.count), rec.count, `${at}: count`);
    assert.match(row.bytes ?? '', /^\d+$/, `${at}: memory data-bytes is not an integer`);
    assert.equal(Number(row.bytes), rec.estimate.memory.total_bytes, `${at}: memory data-bytes`);
    if (training) {
      const want = rec.estimate.performance.training.time_s;
      const got = Number(row.seconds);
      assert.ok(row.seconds !== null && Number.isFinite(got), `${at}: time data-seconds is ${row.seconds}`);
      assert.ok(Math.abs(got - want) <= 1e-9 * Math.abs(want),
                `${at}: time data-seconds ${got} vs CLI ${want}`);
    } else {
      const want = rec.estimate.performance.inference.decode_tokens_per_s_total;
      const got = Number(row.throughput);
      assert.ok(Math.abs(got - want) <= 1e-9 * Math.abs(want),
                `${at}: throughput data-value ${row.throughput} vs CLI ${want}`);
    }
  });
}

async function readPage(p) {
  const text = await requestText(p);
  let request;
  try {
    request = JSON.parse(text);
  } catch (err) {
    assert.fail(`#request-json is not JSON (${err.message}): ${text.slice(0, 300)}`);
  }
  return { text, request, rows: await tableRows(p) };
}

async function assertPageMatchesCli(p) {
  const { text, request, rows } = await readPage(p);
  assertMatchesCli(rows, cliPlan(text), request);
}

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

test('the detail view downloads the measurement script the CLI writes for that setup',
     { timeout: kTestTimeout }, () => check('m-script-download', () => page, async () => {
  // The page plans on the planning module; the complete one comes with the first tool.
  const wasm = [];
  const onRequest = (r) => { if (r.url().endsWith('.wasm')) wasm.push(path.basename(new URL(r.url()).pathname)); };
  page.on('request', onRequest);
  await page.goto(url);
  await waitReady(page);
  assert.deepEqual(wasm, ['gpuplan-plan.wasm']);
  const first = (await tableRows(page))[0];
  await page.click(`#results tbody tr[data-gpu="${first.gpu}"] button.detail`);
  const request = await page.getAttribute('#download-script', 'data-request');
  assert.equal(JSON.parse(request).gpu, first.gpu);
  const [download] = await Promise.all([page.waitForEvent('download'),
                                        page.click('#download-script')]);
  assert.equal(download.suggestedFilename(), 'gpuplan_measure.py');
  const file = path.join(outDir, 'gpuplan_measure.py');
  await download.saveAs(file);
  const text = await readFile(file, 'utf8');
  const run = spawnSync(nativeCli, ['script', '-'], { input: request, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(text, run.stdout, 'the page and the CLI wrote different scripts');
  assert.match(text, new RegExp(`"gpu": "${first.gpu}"`));
  assert.deepEqual(wasm, ['gpuplan-plan.wasm', 'gpuplan.wasm']);
  page.off('request', onRequest);
}));

function cli(command, text) {
  const run = spawnSync(nativeCli, [command, '-'], { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, `native CLI ${command} failed: ${run.stderr}\n${text}`);
  return JSON.parse(run.stdout);
}

// A measurement entered in the detail view is compared by the engine exactly as the
// CLI compares it; applying its factors re-plans every row as calibrated, the share link and
// local storage keep them, and the run lands in the record table and its exports.
test('measure, compare, calibrate: the page agrees with gpuplan calibrate and keeps the factors',
     { timeout: kTestTimeout }, () => check('n-calibrate', () => page, async () => {
  await page.goto(url);
  await page.evaluate(() => localStorage.clear());
  await page.goto(`${url}#`);
  await waitReady(page);
  const first = (await tableRows(page))[0];
  await page.click(`#results tbody tr[data-gpu="${first.gpu}"] button.detail`);
  // The plan is lean: the detail asks the engine for the row's own estimate, and
  // its diagnosis and working are the CLI's estimate of that setup.
  await page.waitForSelector('#detail[data-full="true"]');
  const setupText = await page.getAttribute('#download-script', 'data-request');
  const full = cli('estimate', setupText);
  assert.equal(full.memory.total_bytes, cliPlan(await requestText(page)).recommendations[0].estimate.memory.total_bytes);
  const planned = full.diagnosis;
  assert.deepEqual(await page.$$eval('#diagnosis > li', (lis) => lis.map((li) => li.dataset.code)),
    planned.map((d) => d.code));
  assert.equal(await page.locator('#explain details').count(), Object.keys(full.explain).length);
  // The script's last line fills the fields: 20 GiB allocated (21474836480 bytes), 22 GiB
  // reserved, 900 tokens/s.
  await page.fill('#m_paste', 'step 13 ...\nGPUPLAN_MEASUREMENT {"settings": {}, "measured": ' +
    '{"peak_allocated_bytes": 21474836480, "peak_reserved_bytes": 23622320128, "tokens_per_s": 900}}');
  assert.equal(await page.inputValue('#m_alloc_gib'), '20');
  assert.equal(await page.inputValue('#m_reserved_gib'), '22');
  assert.equal(await page.inputValue('#m_tokens_per_s'), '900');
  await page.fill('#m_util_pct', '70');
  await page.fill('#m_mem_pct', '40');
  await page.fill('#m_label', 'first <b>run</b>');
  await page.click('#compare');
  await page.waitForSelector('#calibration-result:not([hidden])');
  const sent = await page.evaluate(() => document.body.dataset.calibrateRequest);
  const want = cli('calibrate', sent);
  assert.equal(JSON.parse(sent).measured.gpu_utilization, 0.7, sent);
  const shown = await page.$$eval('#comparison tbody tr', (trs) => trs.map((tr) => ({
    quantity: tr.dataset.quantity,
    values: [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.value)),
  })));
  assert.deepEqual(shown.map((r) => r.quantity), want.comparisons.map((c) => c.quantity));
  shown.forEach((row, i) => {
    const c = want.comparisons[i];
    assert.deepEqual(row.values, [c.estimated, c.measured, c.error, c.calibrated], row.quantity);
  });
  // 40% memory and 70% utilisation miss the targets (85%+, 90%+); the diagnosis says throughput.
  assert.equal(await page.locator('#yardstick li[data-met="false"]').count(), 2);
  assert.equal(await page.locator('#diagnosis-measured > li[data-code="throughput_low"]').count(), 1);

  const seq = await planSeq(page);
  await page.click('#calibration-apply');
  await waitPlanned(page, seq);
  const { text, request, rows } = await readPage(page);
  assert.deepEqual(request.calibration, want.calibration, text);
  assertMatchesCli(rows, cliPlan(text), request);
  assert.equal(await page.locator('#results tbody [data-calibrated="true"]').count(), rows.length);
  assert.ok(await page.isVisible('#calibration-banner'));
  assert.match(await page.textContent('#calibration-text'), new RegExp(first.gpu));
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('gpuplan.calibration')));
  assert.deepEqual(stored, want.calibration);

  // The share link carries the factors to another tab; a plain visit restores them from storage.
  const link = await shareLink(page);
  const other = await context.newPage();
  try {
    await other.goto(`${url}${link}`);
    await waitReady(other);
    assert.deepEqual(JSON.parse(await requestText(other)).calibration, want.calibration);
    await other.evaluate(() => localStorage.removeItem('gpuplan.calibration'));
    await other.goto(`${url}?fresh=1`);
    await waitReady(other);
    assert.equal(JSON.parse(await requestText(other)).calibration, undefined, 'no link, no storage: uncalibrated');
  } finally {
    await other.close();
  }

  // The record table holds one row per compared quantity; its exports escape the label.
  assert.equal(await page.locator('#records tbody tr').count(), want.comparisons.length);
  await page.selectOption('#records-format', 'csv');
  await page.click('#records-export');
  const csv = await page.inputValue('#records-out');
  assert.equal(csv.split('\n').length, want.comparisons.length + 1, csv);
  assert.match(csv, /^run,at,label,model,workload,gpu,gpus,quantity,estimated,measured,error_pct/);
  await page.selectOption('#records-format', 'md');
  await page.click('#records-export');
  assert.match(await page.inputValue('#records-out'), /first &lt;b&gt;run&lt;\/b&gt;/);

  const again = await planSeq(page);
  await page.click('#calibration-clear');
  await waitPlanned(page, again);
  assert.equal((await readPage(page)).request.calibration, undefined);
  assert.equal(await page.locator('#results tbody [data-calibrated="true"]').count(), 0);
  assert.equal(await page.evaluate(() => localStorage.getItem('gpuplan.calibration')), null);
}));

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

// Hostile catalogs and URL state are shown as text, named as errors, and never stop
// the page; the CSP of netlify.toml is what the page is served with, and the browser enforces it.
test('hostile catalog names and URL state stay text; the page keeps working', { timeout: kTestTimeout }, () =>
  check('p-hostile', () => page, async () => {
  await page.goto(url);
  await waitReady(page);
  const bundled = JSON.parse(await readFile('catalog/gpus.json', 'utf8'));
  const evil = '<img src=x onerror="window.__pwned=1">';
  const hostile = { ...bundled, catalog_version: '<script>window.__pwned=1</script>',
    gpus: bundled.gpus.map((g, i) => (i === 0 ? { ...g, name: `${evil} ${g.name}` }
      : i === 1 ? { ...g, name: `${'\u202e'.repeat(3)}${'W'.repeat(180)}` } : g)) };
  let seq = await planSeq(page);
  await page.setInputFiles('#catalog-file', { name: `${evil}.json`, mimeType: 'application/json',
                                              buffer: Buffer.from(JSON.stringify(hostile)) });
  await page.waitForFunction(() => document.querySelector('#catalog-version').textContent.includes('onerror')
    || document.querySelector('#catalog-errors').textContent.trim(), null, { polling: 50 });
  // The engine accepts any text as a name (gpuplan catalog --catalog does too): it is data.
  assert.ok((await page.textContent('#catalog-version')).includes(evil),
    `the hostile catalog was refused: ${await page.textContent('#catalog-errors')}`);
  seq = await waitPlanned(page, seq);
  const bodyText = await page.textContent('body');
  assert.ok(bodyText.includes('<script>window.__pwned=1</script>'), 'the catalog version is not shown as text');
  // Nothing became markup: no element the page never makes, no handler ran.
  assert.equal(await page.locator('main img, main script, main iframe').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);

  const b64 = (text) => Buffer.from(text).toString('base64url');
  const hostileHashes = [
    ['#1.%%%', /damaged|format/],
    [`#1.${'A'.repeat(200000)}`, /damaged|holds no form state/],
    [`#1.${Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')}`, /damaged/],
    [`#7.${b64('{}')}`, /unknown share-link format/],
    [`#1.${b64(JSON.stringify({ model: evil, hf: '</textarea><script>window.__pwned=1</script>' }))}`, /config\.json|model/],
    [`#1.${b64(JSON.stringify({ kind: '<svg onload=window.__pwned=1>', seq_len: '1e400' }))}`, /kind|seq_len/],
  ];
  for (const [hash, expected] of hostileHashes) {
    await page.goto(`${url}?h=${hostileHashes.findIndex(([h]) => h === hash)}${hash}`);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.status), null,
                               { polling: 50, timeout: 30_000 });
    await page.waitForTimeout(200);
    const errors = await page.textContent('#errors');
    assert.match(errors, expected, `${hash.slice(0, 40)}: ${errors.slice(0, 200)}`);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, hash.slice(0, 40));
    assert.equal(await page.locator('main img, main script, main svg').count(), 0, hash.slice(0, 40));
  }
  // Still a working planner: a valid edit plans again.
  await page.goto(url);
  await waitReady(page);
  seq = await planSeq(page);
  await setField(page, kSeqLen, '2048');
  await waitPlanned(page, seq);
  await assertPageMatchesCli(page);
}));

test('the page is served with netlify.toml\'s CSP, and the browser enforces it', { timeout: kTestTimeout }, () =>
  check('q-csp', () => page, async () => {
  const { parse } = await import('smol-toml');
  const netlify = parse(await readFile('netlify.toml', 'utf8'));
  const csp = netlify.headers.find((h) => h.for === '/*').values['Content-Security-Policy'];
  const response = await page.goto(url);
  assert.equal(response.headers()['content-security-policy'], csp);
  await waitReady(page);
  const outcome = await page.evaluate(async () => {
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
    // Later, in a task of the page's own (code run by the test driver itself is exempt).
    const evalBlocked = await new Promise((ok) => setTimeout(() => {
      try { (0, eval)('1'); ok(false); } catch { ok(true); }
    }, 0));
    const styled = document.createElement('div');
    styled.setAttribute('style', 'color: rgb(1, 2, 3)');
    document.body.append(styled);
    await new Promise((ok) => setTimeout(ok, 100));
    return { inline: window.__inline, evalBlocked, violations, color: getComputedStyle(styled).color };
  });
  assert.equal(outcome.inline, undefined, 'an inline script ran');
  assert.ok(outcome.evalBlocked, 'eval ran');
  assert.notEqual(outcome.color, 'rgb(1, 2, 3)', 'an inline style applied');
  assert.ok(outcome.violations.some((d) => d.startsWith('script-src')), JSON.stringify(outcome.violations));
  // The CSP reports violations to the console by design: they are this test's evidence.
  problems.length = 0;
}));

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

// The fleet panel's module loads when the panel comes into view.
async function fleetReady(p) {
  await p.locator('#fleet-section').scrollIntoViewIfNeeded();
  await p.waitForSelector('#fleet-section[data-ready]');
}

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

// The detail view's limits are gpuplan limits' answer for the same setup.
test('the limits of a setup equal gpuplan limits for it', { timeout: kTestTimeout },
     () => check('u-limits', () => page, async () => {
  await page.goto(`${url}?limits=1`);
  await waitReady(page);
  const first = (await tableRows(page))[0];
  await page.click(`#results tbody tr[data-gpu="${first.gpu}"] button.detail`);
  const request = await page.getAttribute('#limits-run', 'data-request');
  await page.click('#limits-run');
  await page.waitForSelector('#limits-list li[data-key="largest_inference"]');
  const shown = Object.fromEntries(await page.$$eval('#limits-list li',
    (lis) => lis.map((li) => [li.dataset.key, li.dataset.value])));
  const run = spawnSync(nativeCli, ['limits', '-'], { input: request, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const cli = JSON.parse(run.stdout);
  assert.equal(shown.max_micro_batch, String(cli.limits.max_micro_batch));
  assert.equal(shown.max_seq_len, String(cli.limits.max_seq_len));
  for (const m of cli.largest_models) assert.equal(shown[`largest_${m.kind}`], m.model ?? '', m.kind);
  assert.match(await page.textContent('#limits-list'), /Largest micro-batch: \d/);
}));

// The detail view's launch command is gpuplan launch's for the same setup.
test('the launch command shown equals gpuplan launch for the setup', { timeout: kTestTimeout },
     () => check('v-launch', () => page, async () => {
  await page.goto(`${url}?launch=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  await setField(page, '#kind', 'inference');
  seq = await waitPlanned(page, seq);
  await setField(page, '#framework', 'sglang');
  await waitPlanned(page, seq);
  const first = (await tableRows(page))[0];
  await page.click(`#results tbody tr[data-gpu="${first.gpu}"] button.detail`);
  const request = await page.getAttribute('#launch-run', 'data-request');
  assert.equal(JSON.parse(request).framework, 'sglang');
  await page.click('#launch-run');
  await page.waitForSelector('#launch-command');
  const run = spawnSync(nativeCli, ['launch', '-'], { input: request, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const cli = JSON.parse(run.stdout);
  assert.equal(await page.textContent('#launch-command'), cli.command);
  assert.match(cli.command, /^python3 -m sglang\.launch_server/);
  assert.equal(await page.getAttribute('#launch-command', 'data-framework'), 'sglang');
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

// Every row shows the likely range the CLI reports for its figures, and the
// site links the accuracy page the validation command writes.
test('each row shows the error band gpuplan reports, and the accuracy page is there',
     { timeout: kTestTimeout }, () => check('x-bands', () => page, async () => {
  await page.goto(`${url}?bands=1`);
  await waitReady(page);
  const { text } = await readPage(page);
  const cli = cliPlan(text);
  const shown = await page.$$eval('#results tbody tr[data-gpu]', (trs) => trs.map((tr) => {
    const span = tr.querySelector('td[data-col="time"] .band');
    return [tr.dataset.gpu, span ? Number(span.dataset.low) : null, span ? Number(span.dataset.high) : null];
  }));
  shown.forEach(([gpu, low, high], i) => {
    const band = cli.recommendations[i].estimate.bands['/performance/training/time_s'];
    assert.equal(gpu, cli.recommendations[i].gpu);
    assert.equal(low, band.low, gpu);
    assert.equal(high, band.high, gpu);
  });
  assert.match(await page.getAttribute('#results tbody tr td[data-col="time"]', 'title'), /published measurements/);
  const accuracy = await context.newPage();
  try {
    const response = await accuracy.goto(`${url}accuracy.html`);
    assert.equal(response.status(), 200);
    assert.match(await accuracy.textContent('h1'), /published measurements/);
    assert.ok((await accuracy.$$('table')).length > 5);
  } finally {
    await accuracy.close();
  }
}));

// The memory cell reads "used of capacity (used share)", the share being
// total_bytes / capacity_bytes, and the headroom on its own line; every figure is the CLI's.
const gib = (b) => `${(b / 2 ** 30).toFixed(1)} GiB`;

async function memoryCells(p) {
  return p.$$eval('#results tbody tr[data-gpu]', (trs) => trs.map((tr) => {
    const td = tr.querySelector('td[data-col="memory"]');
    return {
      gpu: tr.dataset.gpu, used: td.querySelector('[data-figure="/memory/total_bytes"]')?.textContent ?? null,
      headroom: td.querySelector('.headroom')?.textContent ?? null, fits: td.querySelector('.headroom')?.dataset.fits,
      capacity: Number(td.dataset.capacity), withHeadroom: Number(td.dataset.withHeadroom),
      meter: Number(td.querySelector('meter')?.getAttribute('value')),
    };
  }));
}

function assertMemoryMatchesCli(cells, cli, headroomPct) {
  assert.ok(cells.length > 0, 'no rows');
  cells.forEach((c, i) => {
    const m = cli.recommendations[i].estimate.memory;
    const at = `row ${i} (${c.gpu})`;
    assert.equal(c.gpu, cli.recommendations[i].gpu, at);
    const pct = Math.round((100 * m.total_bytes) / m.capacity_bytes);
    assert.equal(c.used, `${gib(m.total_bytes)} of ${gib(m.capacity_bytes)} (${pct}%)`, at);
    assert.equal(c.headroom, `+ ${gib(m.total_with_headroom_bytes - m.total_bytes)} headroom (${headroomPct}%) = ` +
      `${gib(m.total_with_headroom_bytes)}: ${m.fits ? 'fits' : 'does not fit'}`, at);
    assert.equal(c.fits, String(m.fits), at);
    assert.equal(c.capacity, m.capacity_bytes, at);
    assert.equal(c.withHeadroom, m.total_with_headroom_bytes, at);
    assert.equal(c.meter, Math.min(pct, 100), `${at}: the meter is the used share`);
  });
}

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
  await setField(page, kMaxGpus, '8');
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

// An open detail follows its card through a re-plan and a
// language switch; Escape closes it and gives focus back to its row; each purpose restores its
// own precision unless the user chose one.
test('details survive a re-plan and a language switch; Escape closes them; purposes keep their precision',
     { timeout: kTestTimeout }, () => check('s-detail-follows', () => page, async () => {
  await page.goto(`${url}#`);
  await waitReady(page);
  const first = (await tableRows(page))[0];
  await page.click(`#results tbody tr[data-gpu="${first.gpu}"] button.detail`);
  await page.waitForSelector('#detail[data-full="true"]');
  const title = await page.textContent('#detail-title');
  // A re-plan from an edited field, as the issue reproduced: blur, change, draw.
  let seq = await planSeq(page);
  await setField(page, kSeqLen, '1024');
  await waitPlanned(page, seq);
  assert.equal(await page.isVisible('#detail'), true, 'the detail closed on a re-plan');
  const following = await page.getAttribute('#detail', 'data-gone') === 'true'
    ? null : await page.textContent('#detail-title');
  if (following !== null) {
    assert.notEqual(following, '', 'the detail lost its title');
    await page.waitForSelector('#detail[data-full="true"]');
    // The detail's working is the estimate of the setup the table's row now stands for.
    const setupText = await page.getAttribute('#download-script', 'data-request');
    assert.equal(JSON.parse(setupText).workload.seq_len, 1024, setupText);
  }
  assert.notEqual(title, '', 'no title before the re-plan');
  // Another language redraws the plan: the detail stays.
  await setLang(page, 'zh-CN');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal(await page.isVisible('#detail'), true, 'the detail closed on a language switch');
  await setLang(page, 'en');
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  // The chart names the parts in words.
  const labels = await page.$$eval('#memory-chart .chart-label', (els) => els.map((e) => e.textContent));
  assert.equal(labels[0], 'Weights', labels.join(', '));
  assert.ok(labels.every((l) => !l.includes('_')), labels.join(', '));
  // Escape closes it and the focus goes back to a row's Details button.
  await page.focus('#detail');
  await page.keyboard.press('Escape');
  assert.equal(await page.isHidden('#detail'), true, 'Escape did not close the detail');
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('detail')), true,
    'focus did not return to the Details button');
  // QLoRA takes nf4; back to inference, bf16 again; a format the user picks stays.
  seq = await planSeq(page);
  await setField(page, '#kind', 'qlora');
  assert.equal(await page.inputValue('#weights'), 'nf4');
  await setField(page, '#kind', 'inference');
  assert.equal(await page.inputValue('#weights'), 'bf16', 'inference kept QLoRA\'s nf4');
  await setField(page, '#weights', 'fp8');
  await setField(page, '#kind', 'lora');
  assert.equal(await page.inputValue('#weights'), 'fp8', 'a chosen format was replaced');
  await waitPlanned(page, seq);
  // A header sort gives way to a new "Rank by": the table is in the planner's order again,
  // its first option on top.
  await page.click('th button[data-sort="cost"]');
  assert.ok(await page.locator('th[aria-sort]').count() === 1);
  seq = await planSeq(page);
  await setField(page, '#objective', 'time');
  await waitPlanned(page, seq);
  assert.equal(await page.locator('th[aria-sort]').count(), 0, 'the header sort stayed');
  assert.equal(await page.getAttribute('#results tbody tr:first-child', 'data-first'), 'true');
}));

// On a phone the recommendations are cards, the first
// within the first screen, each figure under its column's name; the other tables keep every
// header over its own column.
test('a phone shows recommendations as cards, the first on the first screen', { timeout: kTestTimeout }, async () => {
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await check('t-phone', () => phone, async () => {
    await phone.goto(`${url}#`);
    await waitReady(phone);
    const card = phone.locator('#results tbody tr').first();
    const box = await card.boundingBox();
    assert.ok(box && box.y >= 0 && box.y + box.height <= 844, `first card at ${JSON.stringify(box)}`);
    assert.ok(await card.locator('button.detail').isVisible());
    assert.equal(await phone.locator('#results thead').isVisible(), false);
    const labels = await card.locator('td[data-label]').evaluateAll((tds) => tds.map((td) => td.dataset.label));
    assert.ok(labels.length >= 4 && labels.every((l) => l.length > 0), labels.join('|'));
    // No table hides a header while its cells stay (the 640 px rule once did).
    const hidden = await phone.$$eval('table:not(#results) th', (ths) => ths
      .filter((th) => getComputedStyle(th).display === 'none').map((th) => th.closest('table').id));
    assert.deepEqual(hidden, []);
    for (const theme of ['light', 'dark']) {
      await phone.selectOption('#theme', theme);
      await phone.screenshot({ path: path.join(outDir, `t-phone-${theme}.png`), fullPage: false });
    }
    await phone.selectOption('#theme', 'auto');
  });
  await phone.close();
});

// On a desktop the six lines are two rows of three boxes of one height per
// row; screenshots of both themes for a person to look at.
test('desktop form: two rows of three, equal heights; both themes', { timeout: kTestTimeout }, () =>
  check('u-desktop-form', () => page, async () => {
  await page.goto(`${url}#`);
  await waitReady(page);
  const boxes = await page.$$eval('#form > fieldset', (fs) => fs.map((f) => {
    const r = f.getBoundingClientRect();
    return { top: Math.round(r.top), height: Math.round(r.height) };
  }));
  assert.equal(boxes.length, 6);
  const rowsOf = [boxes.slice(0, 3), boxes.slice(3)];
  for (const row of rowsOf) {
    assert.equal(new Set(row.map((b) => b.top)).size, 1, JSON.stringify(row));
    assert.equal(new Set(row.map((b) => b.height)).size, 1, JSON.stringify(row));
  }
  assert.ok(rowsOf[1][0].top > rowsOf[0][0].top);
  // A plan over the whole catalog draws its first 25 options; "Show all" draws every one the
  // engine gave (drawing a hundred rows was most of a re-plan).
  const total = cliPlan(await requestText(page)).recommendations.length;
  if (total > 25) {
    assert.equal((await tableRows(page)).length, 25);
    assert.match(await page.textContent('#show-all'), new RegExp(String(total)));
    await page.click('#show-all');
    assert.equal((await tableRows(page)).length, total);
    assert.equal(await page.isHidden('#show-all'), true);
  }
  for (const theme of ['light', 'dark']) {
    await page.selectOption('#theme', theme);
    await page.screenshot({ path: path.join(outDir, `u-desktop-${theme}.png`), fullPage: false });
  }
  await page.selectOption('#theme', 'auto');
}));

// Every engine message the page shows is the page's words for its code in the
// user's language. The visible text of the results, advice, wait-or-switch, rejections and the
// open detail (its explain list included) holds no ASCII snake_case code or JSON pointer, in
// either language; in Chinese, durations and setups read in Chinese and the explain pointers
// have Chinese names. Full-width digits typed with a Chinese IME are read as numbers.
const kSnake = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g;
const kShown = ['#status', '#errors', '#results tbody', '#advice-section', '#wait-section', '#rejected-section', '#detail'];

async function shownText(p) {
  return p.evaluate((sels) => sels.map((s) => document.querySelector(s)?.innerText ?? '').join('\n'), kShown);
}

test('Chinese all the way: engine codes worded in both languages, pointers named, full-width digits read',
     { timeout: kTestTimeout }, () => check('zz-chinese', () => page, async () => {
  await page.goto(`${url}?zh=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  // Pretraining with a queue: advice, rejections, warnings and a wait-or-switch verdict.
  await setField(page, '#kind', 'pretrain');
  await setField(page, '#model', 'llama-3.2-1b');
  await setField(page, '#tokens', '1e9');
  await setField(page, kMaxGpus, '8');
  seq = await waitPlanned(page, seq);
  let cli = cliPlan((await readPage(page)).text);
  const first = cli.recommendations[0].gpu;
  await setField(page, '#waits', `${first}: 2`);
  seq = await waitPlanned(page, seq);
  cli = cliPlan((await readPage(page)).text);
  assert.ok(cli.advice.length > 0 && cli.rejected.length > 0 && cli.wait_or_switch, 'the test needs advice, rejections, a verdict');
  await page.click('#results tbody tr:first-child button.detail');
  await page.waitForFunction(() => document.querySelectorAll('#explain summary').length > 5, null, { polling: 50 });
  for (const lang of ['en', 'zh-CN']) {
    await setLang(page, lang);
    await page.waitForFunction(() => document.querySelectorAll('#explain summary').length > 5, null, { polling: 50 });
    const text = await shownText(page);
    assert.deepEqual([...new Set(text.match(kSnake) ?? [])], [], `${lang}: engine codes on the page:\n${text}`);
    const summaries = await page.$$eval('#explain summary', (els) => els.map((e) => e.textContent));
    assert.ok(summaries.every((x) => !x.startsWith('/')), `${lang}: a pointer shown as a path: ${summaries.join(' | ')}`);
    const advice = await page.$$eval('#advice li', (lis) => lis.map((li) => li.textContent));
    assert.equal(advice.length, cli.advice.length);
    if (lang === 'en') {
      assert.ok(summaries.includes(`Weights = ${(cli.recommendations[0].estimate.memory.per_gpu_bytes.weights / 2 ** 30).toFixed(1)} GiB`),
        summaries.join(' | '));
      continue;
    }
    // Chinese words for every advice, the verdict and each rejection, with the engine's numbers.
    for (const a of advice) assert.match(a, /[\u4e00-\u9fff]/, a);
    assert.match(await page.textContent('#wait-verdict'), /[\u4e00-\u9fff]/);
    const rejected = await page.$$eval('#rejected li', (lis) => lis.map((li) => li.textContent));
    rejected.forEach((r, i) => assert.match(r, /[\u4e00-\u9fff]/, `${cli.rejected[i].code}: ${r}`));
    assert.ok(summaries.some((x) => x.startsWith('权重 = ')), summaries.join(' | '));
    assert.ok(summaries.some((x) => x.startsWith('训练时间 = ')), summaries.join(' | '));
    assert.ok(summaries.every((x) => /[\u4e00-\u9fff]/.test(x.split(' = ')[0])), summaries.join(' | '));
    // The headline formulas are Chinese; durations and setups read in Chinese.
    const timeFormula = await page.$eval('#explain details[data-path="/performance/training/time_s"] p', (p) => p.textContent);
    assert.equal(timeFormula, '公式: 训练总 token 数 ÷ 每秒 token 数');
    const time = await page.textContent('#results tbody tr:first-child td[data-col="time"]');
    assert.match(time, /\d (天|小时|分钟|秒)/, time);
    const setup = await page.textContent('#results tbody tr:first-child td[data-col="setup"]');
    assert.match(setup, /微批 \d+ × 累积 \d+/, setup);
  }
  await page.click('#detail-close');
  // Full-width digits (a Chinese IME) are numbers; a bad number is named in Chinese, no pointer.
  await setField(page, '#waits', '');
  seq = await waitPlanned(page, seq);
  await setField(page, kMaxGpus, '４');
  await setField(page, '#tokens', '２ｅ９'.replace('ｅ', 'e'));
  seq = await waitPlanned(page, seq);
  let { request } = await readPage(page);
  assert.equal(request.constraints.max_gpus, 4);
  assert.equal(request.workload.tokens, 2e9);
  await setField(page, '#tokens', '１．５e9');
  seq = await waitPlanned(page, seq);
  ({ request } = await readPage(page));
  assert.equal(request.workload.tokens, 1.5e9);
  await setField(page, '#tokens', 'abc');
  await page.waitForFunction(() => document.body.dataset.status === 'error', null, { polling: 50 });
  const errors = await page.innerText('#errors');
  assert.match(errors, /训练总 token 数 — 不是数字：“abc”/, errors);
  assert.doesNotMatch(errors, /\/workload|tokens:/, errors);
  await setField(page, '#tokens', '1e9');
  await waitPlanned(page, seq);
  await setLang(page, 'en');
}));

// The exports follow the page's language with human headers, and
// carry their context above the table (model, workload, six lines, versions, share link); the
// JSON keeps its machine keys; the procurement sheet names no catalog code.
test('exports in the page\'s language, with their context; the sheet names no code',
     { timeout: kTestTimeout }, () => check('zz-exports', () => page, async () => {
  await page.goto(`${url}?exports=1`);
  await waitReady(page);
  const exported = async (format) => {
    await page.selectOption('#export-format', format);
    await page.click('#export');
    await page.waitForFunction(() => document.querySelector('#export-out').value.length > 0, null, { polling: 50 });
    const v = await page.inputValue('#export-out');
    await page.evaluate(() => { document.querySelector('#export-out').value = ''; });
    return v;
  };
  const { catalogVersion, engineVersion } = await page.evaluate(async () => {
    const m = await import('./catalog-loader.js');
    return { catalogVersion: m.catalogVersion, engineVersion: m.engineVersion };
  });
  assert.ok(catalogVersion && engineVersion);
  let csv = (await exported('csv')).split('\n');
  assert.equal(csv[0], '# gpuplan plan');
  assert.ok(csv.includes('# Purpose,LoRA fine-tuning'), csv.join('\n'));
  assert.ok(csv.includes(`# Catalog version,${catalogVersion}`), csv.join('\n'));
  assert.ok(csv.includes(`# Engine version,${engineVersion}`), csv.join('\n'));
  assert.ok(csv.some((l) => l.startsWith('# Share link,http') && l.includes('#1.')), csv.join('\n'));
  assert.ok(csv.includes('Card,Cards,Setup,Memory per card (GiB),Card memory (GiB),Time (h),Decode throughput (tokens/s),' +
    'Cost of the run (USD),Power (W)'), csv.join('\n'));
  await setLang(page, 'zh-CN');
  csv = (await exported('csv')).split('\n');
  assert.equal(csv[0], '# gpuplan 规划方案');
  for (const lead of ['# 模型,', '# 负载,', '# 用途,LoRA 微调', '# 模型与上下文,', '# 精度,', '# 时长或延迟目标,', '# 卡数或预算,',
    '# 机房电力与散热,', `# 目录版本,${catalogVersion}`, `# 引擎版本,${engineVersion}`, '# 分享链接,http']) {
    assert.ok(csv.some((l) => l.startsWith(lead)), `${lead}\n${csv.join('\n')}`);
  }
  const header = csv.find((l) => l.startsWith('显卡,'));
  assert.equal(header, '显卡,卡数,并行配置,每卡显存（GiB）,卡的显存（GiB）,时间（小时）,解码吞吐（token/秒）,整次费用（美元）,功耗（瓦）');
  const row = csv[csv.indexOf(header) + 1];
  assert.match(row, /微批 \d+ × 累积 \d+/, row);
  const md = await exported('md');
  assert.match(md, /^## gpuplan 规划方案$/m);
  assert.match(md, /^- \*\*用途\*\*: LoRA 微调$/m);
  assert.match(md, /^\| 显卡 \| 卡数 \| 并行配置 \|/m);
  assert.doesNotMatch(md, /memory_gib_per_card|cost_usd|decode_tokens/);
  const html = await exported('html');
  assert.match(html, /<dt>引擎版本<\/dt><dd>/);
  assert.match(html, /<th>每卡显存（GiB）<\/th>/);
  const json = JSON.parse(await exported('json'));
  assert.equal(json.language, 'zh-CN');
  assert.equal(json.catalog_version, catalogVersion);
  assert.equal(json.engine_version, engineVersion);
  assert.match(json.link, /^http.*#1\./);
  assert.equal(json.requirements.length, 6);
  assert.equal(json.columns[0].key, 'card');
  assert.ok('memory_bytes' in json.recommendations[0]);
  // The procurement sheet: Chinese, and no catalog code (air_or_liquid, nvlink4, infinity_fabric).
  const sheet = await exported('sheet-md');
  assert.match(sheet, /^# GPU 采购需求单$/m);
  assert.doesNotMatch(sheet.replace(/<http[^>]*>/g, ''), kSnake);
  await setLang(page, 'en');
}));

// A Hugging Face id in the model field. The Hub is a stub answered inside the
// browser (page.route): nothing leaves the machine, and a context route refuses huggingface.co
// to every page without a stub (the offline case). The CSP is checked by the browser before a
// route sees a request, so a stub that answers proves connect-src lets huggingface.co through.
const kHubConfig = {
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 1536, intermediate_size: 8960,
  num_hidden_layers: 28, num_attention_heads: 12, num_key_value_heads: 2, vocab_size: 151936,
  max_position_embeddings: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16',
};
const kHubIndex = { metadata: { total_parameters: 1543714304, total_size: 3087428608 },
  weight_map: { 'model.embed_tokens.weight': 'model-00001-of-00002.safetensors',
    'model.norm.weight': 'model-00002-of-00002.safetensors' } };

async function stubHub(p, asked) {
  await p.route('https://huggingface.co/**', (route) => {
    const where = new URL(route.request().url());
    asked.push(where.pathname);
    const cors = { 'Access-Control-Allow-Origin': '*' };
    const json = (status, body) => route.fulfill({ status, headers: cors, contentType: 'application/json',
      body: JSON.stringify(body) });
    if (where.pathname.startsWith('/meta-llama/')) return json(401, { error: 'Access to model is restricted' });
    if (where.pathname === '/Qwen/Qwen2.5-1.5B-Instruct/resolve/main/config.json') return json(200, kHubConfig);
    if (where.pathname === '/Qwen/Qwen2.5-1.5B-Instruct/resolve/main/model.safetensors.index.json') {
      return json(200, kHubIndex);
    }
    return json(404, { error: 'Entry not found' });
  });
}

// The Hub's 404s and 401s are expected here; any other console or page error still counts.
function dropHubNoise() {
  const kept = problems.filter((line) => !/huggingface\.co/.test(line));
  problems.splice(0, problems.length, ...kept);
}

test('a Hugging Face id is read from the Hub, planned as a pasted config, and its link works offline; gated and offline say so', { timeout: kTestTimeout * 2 }, () =>
  check('s-hub', () => page, async () => {
  await context.route('https://huggingface.co/**', (route) => route.abort('internetdisconnected'));
  const hosts = new Set();
  const onRequest = (r) => hosts.add(new URL(r.url()).host);
  context.on('request', onRequest);
  const asked = [];
  const hubPage = await context.newPage();
  try {
    await stubHub(hubPage, asked);
    await hubPage.goto(url);
    await waitReady(hubPage);
    let seq = await planSeq(hubPage);
    await setField(hubPage, '#kind', 'inference');
    await setField(hubPage, '#model', 'Qwen/Qwen2.5-1.5B-Instruct');
    seq = await waitPlanned(hubPage, seq);
    const { request } = await readPage(hubPage);
    assert.equal(request.model.hf_id, 'Qwen/Qwen2.5-1.5B-Instruct');
    assert.equal(request.model.hf_config.num_hidden_layers, 28);
    assert.equal(request.model.preset, undefined);
    await assertPageMatchesCli(hubPage);
    assert.deepEqual(asked.sort(), ['config.json', 'hf_quant_config.json', 'model.safetensors.index.json']
      .map((f) => `/Qwen/Qwen2.5-1.5B-Instruct/resolve/main/${f}`));
    const info = await hubPage.textContent('#hub-info');
    for (const want of ['From the Hub: Qwen/Qwen2.5-1.5B-Instruct', '1.54B parameters', '28 layers',
      'grouped-query attention (12 heads, 2 KV heads)', 'context 32,768 tokens', 'tensors in the weight map: 2']) {
      assert.ok(info.includes(want), `#hub-info lacks "${want}": ${info}`);
    }
    assert.equal(await hubPage.inputValue('#hf'), JSON.stringify(kHubConfig, null, 2));

    // The share link carries the id and the config: it plans offline without asking the Hub.
    await hubPage.click('#share');
    const link = await hubPage.inputValue('#share-url');
    const offline = await context.newPage();
    await offline.goto(link);
    await waitReady(offline);
    assert.deepEqual((await readPage(offline)).request.model, request.model);
    assert.match(await offline.textContent('#hub-info'), /From the share link \(not read again\): Qwen\/Qwen2\.5-1\.5B-Instruct/);
    assert.equal(asked.length, 3, 'the share link asked the Hub again');

    // Offline (the request fails): said so, and a pasted config plans with the id as its label.
    seq = await planSeq(offline);
    await setField(offline, '#model', 'Qwen/Qwen2.5-7B-Instruct');
    await offline.waitForSelector('body[data-status="error"]');
    assert.match(await offline.textContent('#hub-status'), /Could not reach huggingface\.co for Qwen\/Qwen2\.5-7B-Instruct/);
    // The last good plan stays, marked stale, rather than being wiped.
    assert.equal(await offline.evaluate(() => document.body.dataset.stale), 'true');
    assert.ok(await offline.isVisible('#stale-note'));
    await offline.close();

    // Gated (401): said so, the paste box opens, and the pasted config is planned.
    seq = await planSeq(hubPage);
    await setField(hubPage, '#model', 'meta-llama/Llama-3.1-8B');
    await hubPage.waitForSelector('body[data-status="error"]');
    assert.match(await hubPage.textContent('#hub-status'), /meta-llama\/Llama-3\.1-8B is gated or private on the Hub \(HTTP 401\)/);
    assert.equal(await hubPage.evaluate(() => document.querySelector('#hf-box').open), true);
    assert.equal(await hubPage.inputValue('#hf'), '', 'the last model\'s config stayed');
    // Focused first: with the model field's suggestion list open, Chromium keeps the typing there.
    await hubPage.locator('#hf').evaluate((e) => e.focus());
    await setField(hubPage, '#hf', JSON.stringify({ ...kHubConfig, num_hidden_layers: 32 }));
    seq = await waitPlanned(hubPage, seq);
    const gated = (await readPage(hubPage)).request;
    assert.equal(gated.model.hf_id, 'meta-llama/Llama-3.1-8B');
    assert.equal(gated.model.hf_config.num_hidden_layers, 32);
    assert.equal(await hubPage.isHidden('#hub-status'), true, 'the gated message stayed after the paste');
    await assertPageMatchesCli(hubPage);
    // In Chinese too.
    await setLang(hubPage, 'zh-CN');  // waits for the Chinese dictionary, fetched when chosen
    assert.match(await hubPage.textContent('#hub-hint'), /Hugging Face 模型 id/);
    await setLang(hubPage, 'en');
    // Back to a preset: the Hub's config goes with its model.
    seq = await planSeq(hubPage);
    await setField(hubPage, '#model', 'llama-3.1-8b');
    await waitPlanned(hubPage, seq);
    assert.deepEqual((await readPage(hubPage)).request.model, { preset: 'llama-3.1-8b' });
    assert.equal(await hubPage.isHidden('#hub-info'), true);
  } finally {
    await hubPage.close();
    context.off('request', onRequest);
    await context.unroute('https://huggingface.co/**');
  }
  assert.deepEqual([...hosts].filter((h) => h && !/^127\.0\.0\.1:\d+$/.test(h)), ['huggingface.co'],
    'a request went to another host');
  dropHubNoise();
}));

// A local .gguf file's header plans under llama.cpp with its file type.
test('a GGUF file\'s header is read in the page and planned under llama.cpp', { timeout: kTestTimeout }, () =>
  check('t-gguf', () => page, async () => {
  const { gguf, kKv, kTensors } = await import('./gguf-writer.mjs');
  // A small Llama-shaped model; the tensors' data need not be there (only the header is read).
  const kv = kKv.map((e) => ({ 'llama.block_count': ['llama.block_count', 4, 2],
    'llama.embedding_length': ['llama.embedding_length', 4, 2048],
    'llama.feed_forward_length': ['llama.feed_forward_length', 4, 8192] }[e[0]] ?? e));
  const tensors = kTensors.map(([n, d, type]) => [n, d.map((x) => x * 32), type]);
  await page.goto(url);
  await waitReady(page);
  let seq = await planSeq(page);
  await page.setInputFiles('#gguf-file', { name: 'tiny-q4_k_m.gguf', mimeType: 'application/octet-stream',
    buffer: Buffer.concat([gguf({ kv, tensors }), Buffer.alloc(1 << 16)]) });
  seq = await waitPlanned(page, seq);
  const { request } = await readPage(page);
  assert.equal(request.framework, 'llama_cpp');
  assert.equal(request.workload.kind, 'inference');
  assert.equal(request.precision.weights, 'gguf_q4_k_m');
  assert.equal(request.model.hf_config.model_type, 'llama');
  assert.equal(request.model.hf_config.hidden_size, 2048);
  assert.equal(request.model.hf_id, undefined);
  await assertPageMatchesCli(page);
  const info = await page.textContent('#hub-info');
  for (const want of ['tiny-q4_k_m.gguf: GGUF v3, architecture llama, 18 tensors', 'Tensor types: Q4_K × 11, Q6_K × 5, F32 × 2',
    'File type MOSTLY_Q4_K_M: planned as gguf_q4_k_m under llama.cpp']) {
    assert.ok(info.includes(want), `#hub-info lacks "${want}": ${info}`);
  }
  // A type the engine has no format for: the nearest, and the page says it approximated.
  const iq4 = kv.map((e) => (e[0] === 'general.file_type' ? ['general.file_type', 4, 13] : e));  // Q3_K_L
  await page.setInputFiles('#gguf-file', { name: 'tiny-iq4_xs.gguf', mimeType: 'application/octet-stream',
    buffer: gguf({ kv: iq4, tensors: tensors.map(([n, d, type]) => [n, d, type === 0 ? 0 : 23]) }) });
  seq = await waitPlanned(page, seq);
  assert.equal((await readPage(page)).request.precision.weights, 'gguf_q4_0');
  assert.match(await page.textContent('#hub-info'), /File type MOSTLY_Q3_K_L is not one of the engine's formats: approximated as gguf_q4_0/);
  // Not a GGUF file: named, and nothing else changes.
  await page.setInputFiles('#gguf-file', { name: 'notes.gguf', mimeType: 'text/plain', buffer: Buffer.from('hello') });
  await page.waitForFunction(() => /not a GGUF file/.test(document.querySelector('#hub-status').textContent));
}));

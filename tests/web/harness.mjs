// SPDX-License-Identifier: MIT
// What the browser tests share (tests/web/browser-*.test.mjs, one file per part of the page):
// the built page served with the production headers (scripts/serve.mjs), one headless Chromium
// per test file, and the helpers that read the page and run the native CLI on the request it
// sent. Importing it registers the file's before/after hooks.
// Env: GPUPLAN_SITE_DIR (build/site), GPUPLAN_NATIVE_CLI (build/native-release/bin/gpuplan),
//      CHROMIUM (/usr/bin/chromium), GPUPLAN_TEST_OUTPUT (build/test-output/web: screenshots).
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launchChromium } from './chromium.mjs';

export const siteDir = process.env.GPUPLAN_SITE_DIR || 'build/site';
export const nativeCli = process.env.GPUPLAN_NATIVE_CLI || 'build/native-release/bin/gpuplan';
export const outDir = process.env.GPUPLAN_TEST_OUTPUT || 'build/test-output/web';
export const kTestTimeout = 90_000;

// The form's inputs the tests type into (the page's DOM contract, with #kind, #model, #weights,
// #tokens, #results, #request-json, #share, #share-url, #lang, #catalog-file, #catalog-errors
// and #errors, and body[data-status] / body[data-plan-seq]).
export const kSeqLen = '#seq_len';
export const kMaxGpus = '#max_gpus';
export const kNodePower = '#node_power_w';
export let server;
export let url;
export let context;
export let closeBrowser;
export let page;  // the file's main page; its tests run on it in order
export const problems = [];  // console errors and page errors since the current test began

export function watch(p) {
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
export async function check(name, shotPage, body) {
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

export const planSeq = (p) => p.evaluate(() => Number(document.body.dataset.planSeq));

// The share link in the address, once the page has written it (web/main.js shareSoon: it
// follows the form when typing pauses).
export async function shareLink(p) {
  await p.waitForFunction(() => document.body.dataset.share === 'written', null, { polling: 50 });
  return p.evaluate(() => location.hash);
}

export const status = (p) => p.evaluate(() => document.body.dataset.status);

// Waits until the page has planned again (data-plan-seq above `before`) and is ready, and then
// until it stays that way for a moment, so that several quick input changes settle on the last.
export async function waitPlanned(p, before, { timeout = 30_000 } = {}) {
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

export async function waitReady(p) {
  await p.waitForSelector('body[data-status="ready"]', { timeout: 30_000 });
  return waitPlanned(p, -Infinity);
}

// The language switch: another dictionary may be fetched first (i18n.js loadLanguage).
export async function setLang(p, lang) {
  await p.selectOption('#lang', lang);
  await p.waitForFunction((l) => document.documentElement.lang === l, lang, { polling: 50 });
}

// Sets a form control as a user would: a <select> by value, anything else by typing; then an
// explicit change event, which a text input only fires on blur.
export async function setField(p, selector, value) {
  const tag = await p.locator(selector).evaluate((el) => el.tagName);
  if (tag === 'SELECT') {
    await p.selectOption(selector, String(value));
  } else {
    await p.fill(selector, String(value));
  }
  await p.locator(selector).dispatchEvent('change');
}

export async function requestText(p) {
  const text = (await p.locator('#request-json').textContent())?.trim() ?? '';
  assert.ok(text.length > 0, '#request-json is empty');
  return text;
}

export async function tableRows(p) {
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

export function cliPlan(text, catalogDir) {
  const args = catalogDir ? ['--catalog', catalogDir, 'plan', '-'] : ['plan', '-'];
  const run = spawnSync(nativeCli, args, { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, `native CLI failed on the page's request: ${run.stderr}\n${text}`);
  return JSON.parse(run.stdout);
}

// Every row the page shows is the CLI's recommendation at the same place.
export function assertMatchesCli(rows, cli, request) {
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

export async function readPage(p) {
  const text = await requestText(p);
  let request;
  try {
    request = JSON.parse(text);
  } catch (err) {
    assert.fail(`#request-json is not JSON (${err.message}): ${text.slice(0, 300)}`);
  }
  return { text, request, rows: await tableRows(p) };
}

export async function assertPageMatchesCli(p) {
  const { text, request, rows } = await readPage(p);
  assertMatchesCli(rows, cliPlan(text), request);
}

export function cli(command, text) {
  const run = spawnSync(nativeCli, [command, '-'], { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, `native CLI ${command} failed: ${run.stderr}\n${text}`);
  return JSON.parse(run.stdout);
}

// The fleet panel's module loads when the panel comes into view.
export async function fleetReady(p) {
  await p.locator('#fleet-section').scrollIntoViewIfNeeded();
  await p.waitForSelector('#fleet-section[data-ready]');
}

// The memory cell reads "used of capacity (used share)", the share being
// total_bytes / capacity_bytes, and the headroom on its own line; every figure is the CLI's.
export const gib = (b) => `${(b / 2 ** 30).toFixed(1)} GiB`;

export async function memoryCells(p) {
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

export function assertMemoryMatchesCli(cells, cli, headroomPct) {
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

// Every engine message the page shows is the page's words for its code in the
// user's language. The visible text of the results, advice, wait-or-switch, rejections and the
// open detail (its explain list included) holds no ASCII snake_case code or JSON pointer, in
// either language; in Chinese, durations and setups read in Chinese and the explain pointers
// have Chinese names. Full-width digits typed with a Chinese IME are read as numbers.
export const kSnake = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g;
export const kShown = ['#status', '#errors', '#results tbody', '#advice-section', '#wait-section', '#rejected-section', '#detail'];

export async function shownText(p) {
  return p.evaluate((sels) => sels.map((s) => document.querySelector(s)?.innerText ?? '').join('\n'), kShown);
}

// A Hugging Face id in the model field. The Hub is a stub answered inside the
// browser (page.route): nothing leaves the machine, and a context route refuses huggingface.co
// to every page without a stub (the offline case). The CSP is checked by the browser before a
// route sees a request, so a stub that answers proves connect-src lets huggingface.co through.
export const kHubConfig = {
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 1536, intermediate_size: 8960,
  num_hidden_layers: 28, num_attention_heads: 12, num_key_value_heads: 2, vocab_size: 151936,
  max_position_embeddings: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16',
};

export const kHubIndex = { metadata: { total_parameters: 1543714304, total_size: 3087428608 },
  weight_map: { 'model.embed_tokens.weight': 'model-00001-of-00002.safetensors',
    'model.norm.weight': 'model-00002-of-00002.safetensors' } };

export async function stubHub(p, asked) {
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
export function dropHubNoise() {
  const kept = problems.filter((line) => !/huggingface\.co/.test(line));
  problems.splice(0, problems.length, ...kept);
}

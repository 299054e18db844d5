// SPDX-License-Identifier: MIT
// Models from outside the catalog: a Hugging Face id read from the Hub (stubbed), a GGUF file's
// header read in the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertPageMatchesCli,
  check,
  context,
  dropHubNoise,
  kHubConfig,
  kTestTimeout,
  page,
  planSeq,
  readPage,
  setField,
  setLang,
  status,
  stubHub,
  url,
  waitPlanned,
  waitReady,
} from './harness.mjs';

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

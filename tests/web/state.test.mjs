// SPDX-License-Identifier: MIT
// The page's request builder and share-link codec (web/state.js), in Node: no browser needed.
// Expectations are literals worked by hand from the six lines the test fills in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRequest, decodeShare, encodeShare, InputError, kDefaults } from '../../web/state.js';

test('the default lines make the request the page shows first', () => {
  assert.deepEqual(buildRequest({ ...kDefaults }), {
    model: { preset: 'llama-3.1-8b' },
    workload: { kind: 'lora', seq_len: 4096, tokens: 1e8 },
    precision: { weights: 'bf16' },
    constraints: { max_gpus: 64, objective: 'default' },
  });
});

test('inference uses its own fields; a deadline in hours becomes seconds only for training', () => {
  const state = { ...kDefaults, kind: 'inference', ttft_ms: '500', deadline_h: '2' };
  assert.deepEqual(buildRequest(state).workload,
    { kind: 'inference', prompt_tokens: 1024, output_tokens: 256, concurrency: 16 });
  assert.deepEqual(buildRequest(state).constraints, { max_gpus: 64, objective: 'default', ttft_ms: 500 });
  // 2 h x 3600 s/h = 7200 s
  assert.equal(buildRequest({ ...kDefaults, deadline_h: '2' }).constraints.deadline_s, 7200);
});

test('a pasted config.json replaces the preset; bad text names the field', () => {
  const hf = '{"model_type": "llama", "hidden_size": 64}';
  assert.deepEqual(buildRequest({ ...kDefaults, hf }).model,
    { hf_config: { model_type: 'llama', hidden_size: 64 } });
  assert.throws(() => buildRequest({ ...kDefaults, hf: '{oops' }),
    (e) => e instanceof InputError && e.field === 'hf_config');
  assert.throws(() => buildRequest({ ...kDefaults, hf: '[1]' }),
    (e) => e instanceof InputError && e.field === 'hf_config');
  assert.throws(() => buildRequest({ ...kDefaults, tokens: 'lots' }),
    (e) => e instanceof InputError && e.field === 'tokens' && /"lots"/.test(e.message));
});

test('a share link carries only what differs from the defaults, and round-trips', () => {
  // {"cv":"v1","seq_len":"8192"} in base64url is eyJjdiI6InYxIiwic2VxX2xlbiI6IjgxOTIifQ
  const code = encodeShare({ ...kDefaults, seq_len: 8192 }, 'v1');
  assert.equal(code, '1.eyJjdiI6InYxIiwic2VxX2xlbiI6IjgxOTIifQ');
  const back = decodeShare(`#${code}`);
  assert.equal(back.catalogVersion, 'v1');
  // Decoded values are the form's strings: the defaults as text, with the shared field.
  const asText = Object.fromEntries(Object.entries(kDefaults).map(([k, v]) => [k, String(v)]));
  assert.deepEqual(back.state, { ...asText, seq_len: '8192' });
  // Non-ASCII survives (a config.json may carry a Chinese model name).
  const zh = decodeShare(encodeShare({ ...kDefaults, hf: '{"name": "通义"}' }, 'v1'));
  assert.equal(zh.state.hf, '{"name": "通义"}');
});

test('a link of another format, or unknown fields, cannot inject state', () => {
  assert.throws(() => decodeShare('#2.abc'), /unknown share-link format/);
  // {"cv":"x","evil":"1","kind":"qlora"}
  const raw = Buffer.from('{"cv":"x","evil":"1","kind":"qlora"}').toString('base64url');
  const { state } = decodeShare(`#1.${raw}`);
  assert.equal(state.kind, 'qlora');
  assert.equal('evil' in state, false);
});

test('explicit architecture numbers replace the preset once layers is given', () => {
  const arch = { layers: '32', hidden: '4096', intermediate: '14336', heads: '32', kv_heads: '8', vocab: '128256' };
  assert.deepEqual(buildRequest({ ...kDefaults, ...arch }).model,
    { layers: 32, hidden: 4096, intermediate: 14336, heads: 32, kv_heads: 8, vocab: 128256 });
  // Missing fields are left out, so the engine names them (/model/heads: is required ...).
  assert.deepEqual(buildRequest({ ...kDefaults, layers: '32', hidden: '4096' }).model,
    { layers: 32, hidden: 4096 });
  assert.deepEqual(buildRequest({ ...kDefaults, hidden: '4096' }).model, { preset: 'llama-3.1-8b' });
});

// The global batch (sequences, or tokens converted with the sequence length), the
// headroom in percent and the chunked-loss switch.
test('global batch, headroom and chunked loss make their request fields', () => {
  // Sequences go as typed.
  assert.equal(buildRequest({ ...kDefaults, global_batch: '256' }).workload.global_batch, 256);
  // 1,048,576 tokens / 4096 tokens a sequence = 256 sequences.
  assert.equal(buildRequest({ ...kDefaults, global_batch: '1048576', global_batch_unit: 'tokens' })
    .workload.global_batch, 256);
  // 1,000,000 / 4096 = 244.14 -> 244 whole sequences; 1,001,000 / 4096 = 244.38 -> 244; 1,003,000 -> 244.87 -> 245.
  assert.equal(buildRequest({ ...kDefaults, global_batch: '1e6', global_batch_unit: 'tokens' }).workload.global_batch, 244);
  assert.equal(buildRequest({ ...kDefaults, global_batch: '1003000', global_batch_unit: 'tokens' }).workload.global_batch, 245);
  // Under one sequence, or no sequence length to convert with, names the field.
  assert.throws(() => buildRequest({ ...kDefaults, global_batch: '1000', global_batch_unit: 'tokens' }),
    (e) => e instanceof InputError && e.field === 'global_batch');
  assert.throws(() => buildRequest({ ...kDefaults, seq_len: '', global_batch: '8192', global_batch_unit: 'tokens' }),
    (e) => e instanceof InputError && e.field === 'global_batch');
  // Empty: the engine's default (no field); serving has no global batch.
  assert.equal('global_batch' in buildRequest({ ...kDefaults }).workload, false);
  assert.equal('global_batch' in buildRequest({ ...kDefaults, kind: 'inference', global_batch: '64' }).workload, false);
  // 15 % -> 0.15; empty -> the engine's 0.2 (no field).
  assert.equal(buildRequest({ ...kDefaults, headroom_pct: '15' }).headroom, 0.15);
  assert.equal('headroom' in buildRequest({ ...kDefaults }), false);
  assert.equal(buildRequest({ ...kDefaults, kind: 'inference', headroom_pct: '10' }).headroom, 0.1);
  assert.deepEqual(buildRequest({ ...kDefaults, chunked_loss: '1' }).memory_techniques, { chunked_loss: true });
  assert.equal('memory_techniques' in buildRequest({ ...kDefaults }), false);
  assert.equal('memory_techniques' in buildRequest({ ...kDefaults, kind: 'inference', chunked_loss: '1' }), false);
});

test('the new fields round-trip through a share link; a link without them keeps its meaning', () => {
  const state = { ...kDefaults, kind: 'pretrain', global_batch: '2097152', global_batch_unit: 'tokens',
    headroom_pct: '12.5', chunked_loss: '1' };
  const back = decodeShare(`#${encodeShare(state, 'v1', 'e1')}`).state;
  assert.equal(back.global_batch, '2097152');
  assert.equal(back.global_batch_unit, 'tokens');
  assert.equal(back.headroom_pct, '12.5');
  assert.equal(back.chunked_loss, '1');
  assert.deepEqual(buildRequest(back), buildRequest(state));
  // {"cv":"v1","seq_len":"8192"}: made before the fields existed; they stay at their defaults.
  const old = decodeShare('#1.eyJjdiI6InYxIiwic2VxX2xlbiI6IjgxOTIifQ').state;
  assert.deepEqual([old.global_batch, old.global_batch_unit, old.headroom_pct, old.chunked_loss], ['', '', '', '']);
  assert.deepEqual(buildRequest(old), { model: { preset: 'llama-3.1-8b' },
    workload: { kind: 'lora', seq_len: 8192, tokens: 1e8 }, precision: { weights: 'bf16' },
    constraints: { max_gpus: 64, objective: 'default' } });
  // Only '1' turns the switch on: {"chunked_loss":"<b>"}
  const odd = Buffer.from('{"chunked_loss":"<b>"}').toString('base64url');
  assert.equal(decodeShare(`#1.${odd}`).state.chunked_loss, '');
});

// The contract's second-round training fields, set in the advanced group.
test('the advanced training fields make their request fields; empty ones are not sent', () => {
  const state = { ...kDefaults, kind: 'pretrain', optimizer_states: 'bf16', compile: '1',
    recompute: 'every_n_layers', recompute_every: '4', pp_schedule: 'interleaved', virtual_stages: '3',
    overlap_tp_comm: 'on', overlap_grad_reduce: 'off' };
  const r = buildRequest(state);
  assert.deepEqual(r.precision, { weights: 'bf16', optimizer_states: 'bf16' });
  assert.deepEqual(r.memory_techniques, { compile: true, recompute: 'every_n_layers', recompute_every: 4 });
  assert.deepEqual(r.parallel, { pp_schedule: 'interleaved', virtual_stages: 3,
    overlap: { tp_comm: true, grad_reduce: false } });
  // n and v go only with the choice that reads them; an empty one is left to the engine
  // (every_n_layers without n is its error, named at /memory_techniques/recompute_every).
  const other = buildRequest({ ...state, recompute: 'op_selective', pp_schedule: 'gpipe' });
  assert.deepEqual(other.memory_techniques, { compile: true, recompute: 'op_selective' });
  assert.deepEqual(other.parallel, { pp_schedule: 'gpipe', overlap: { tp_comm: true, grad_reduce: false } });
  assert.deepEqual(buildRequest({ ...state, recompute_every: '', virtual_stages: '' }).memory_techniques,
    { compile: true, recompute: 'every_n_layers' });
  assert.deepEqual(buildRequest({ ...state, virtual_stages: '' }).parallel.pp_schedule, 'interleaved');
  assert.equal('virtual_stages' in buildRequest({ ...state, virtual_stages: '' }).parallel, false);
  assert.throws(() => buildRequest({ ...state, recompute_every: 'two' }),
    (e) => e instanceof InputError && e.field === 'recompute_every');
  // With chunked loss both switches go together.
  assert.deepEqual(buildRequest({ ...kDefaults, chunked_loss: '1', compile: '1' }).memory_techniques,
    { chunked_loss: true, compile: true });
  // Defaults: nothing of them is sent; serving sends none of them whatever the form holds.
  const plain = buildRequest({ ...kDefaults });
  assert.deepEqual(plain.precision, { weights: 'bf16' });
  assert.equal('memory_techniques' in plain, false);
  assert.equal('parallel' in plain, false);
  const serving = buildRequest({ ...state, kind: 'inference' });
  assert.deepEqual(serving.precision, { weights: 'bf16' });
  assert.equal('memory_techniques' in serving, false);
  assert.equal('parallel' in serving, false);
  // An overlap the form leaves at default is absent, not false; all three absent: no overlap.
  assert.equal('overlap' in buildRequest({ ...kDefaults, pp_schedule: '1f1b' }).parallel, false);
  assert.deepEqual(buildRequest({ ...kDefaults, overlap_param_gather: 'off' }).parallel,
    { overlap: { param_gather: false } });
});

test('the advanced fields round-trip through a share link; older links leave them empty', () => {
  const state = { ...kDefaults, kind: 'full_finetune', optimizer_states: 'param', compile: '1',
    recompute: 'every_n_layers', recompute_every: '2', pp_schedule: 'interleaved', virtual_stages: '4',
    overlap_tp_comm: 'off', overlap_grad_reduce: 'on', overlap_param_gather: 'off' };
  const code = encodeShare(state, 'v1', 'e1');
  const back = decodeShare(`#${code}`).state;
  for (const k of ['optimizer_states', 'compile', 'recompute', 'recompute_every', 'pp_schedule',
    'virtual_stages', 'overlap_tp_comm', 'overlap_grad_reduce', 'overlap_param_gather']) {
    assert.equal(back[k], String(state[k]), k);
  }
  assert.deepEqual(buildRequest(back), buildRequest(state));
  // At their defaults they are not written into the link: the default link is the one it was.
  assert.equal(encodeShare({ ...kDefaults, seq_len: 8192 }, 'v1'), '1.eyJjdiI6InYxIiwic2VxX2xlbiI6IjgxOTIifQ');
  const old = decodeShare('#1.eyJjdiI6InYxIiwic2VxX2xlbiI6IjgxOTIifQ').state;
  assert.deepEqual([old.optimizer_states, old.compile, old.recompute, old.recompute_every, old.pp_schedule,
    old.virtual_stages, old.overlap_tp_comm, old.overlap_grad_reduce, old.overlap_param_gather],
  ['', '', '', '', '', '', '', '', '']);
  // Only '1' turns compile on: {"compile":"true"}
  const odd = Buffer.from('{"compile":"true"}').toString('base64url');
  assert.equal(decodeShare(`#1.${odd}`).state.compile, '');
  assert.equal('memory_techniques' in buildRequest(decodeShare(`#1.${odd}`).state), false);
});

test('a serving engine\'s settings go under its own names; none without an engine', () => {
  const state = { ...kDefaults, kind: 'inference', srv_share: '0.8', srv_max_seqs: '64',
    srv_batched: '4096', srv_max_model_len: '8192', srv_eager: '1', srv_version: '0.8.5',
    srv_n_ctx: '16384', srv_cache_k: 'q8_0' };
  assert.equal(buildRequest(state).serving, undefined);
  assert.deepEqual(buildRequest({ ...state, framework: 'vllm' }).serving, {
    version: '0.8.5', gpu_memory_utilization: 0.8, max_num_seqs: 64,
    max_num_batched_tokens: 4096, max_model_len: 8192, enforce_eager: true });
  assert.equal(buildRequest({ ...state, framework: 'sglang' }).serving.mem_fraction_static, 0.8);
  assert.equal(buildRequest({ ...state, framework: 'tensorrt_llm' }).serving.kv_cache_free_gpu_mem_fraction, 0.8);
  // llama.cpp: its ubatch, context and cache types; the share and the scheduler caps are not its.
  assert.deepEqual(buildRequest({ ...state, framework: 'llama_cpp' }).serving,
    { version: '0.8.5', n_ubatch: 4096, n_ctx: 16384, cache_type_k: 'q8_0' });
  // Training never sends them.
  assert.equal(buildRequest({ ...state, kind: 'lora', framework: 'vllm' }).serving, undefined);
});

// A Hugging Face id in the model field, and the config read for it.
test('a Hub id is told from a preset, and the config read for it is sent with the id as its label', async () => {
  const { buildRequest, hubIdOf, kDefaults, encodeShare, decodeShare } = await import('../../web/state.js');
  assert.equal(hubIdOf('Qwen/Qwen2.5-72B-Instruct'), 'Qwen/Qwen2.5-72B-Instruct');
  assert.equal(hubIdOf(' meta-llama/Llama-3.1-8B '), 'meta-llama/Llama-3.1-8B');
  for (const no of ['llama-3.1-8b', 'gguf:tiny.gguf', 'a/b/c', '/x', 'x/', 'https://huggingface.co/a/b', '']) {
    assert.equal(hubIdOf(no), null, no);
  }
  const config = { model_type: 'qwen2', num_hidden_layers: 28 };
  const state = { ...kDefaults, model: 'Qwen/Qwen2.5-1.5B', hf_id: 'Qwen/Qwen2.5-1.5B', hf: JSON.stringify(config) };
  assert.deepEqual(buildRequest(state).model, { hf_config: config, hf_id: 'Qwen/Qwen2.5-1.5B' });
  // A GGUF file's source is no Hub id: the config goes alone.
  assert.deepEqual(buildRequest({ ...state, model: 'gguf:x.gguf', hf_id: 'gguf:x.gguf' }).model, { hf_config: config });
  // The link format holds the new field (its default is empty): the id and the config travel.
  const back = decodeShare(`#${encodeShare(state, 'cv', 'ev')}`).state;
  assert.equal(back.hf_id, 'Qwen/Qwen2.5-1.5B');
  assert.equal(back.hf, state.hf);
});

test('the market goes to pricing.market only when chosen, and a link carries it', () => {
  // Nothing chosen: no pricing member, the engine's default market (global), as older links had.
  assert.equal(buildRequest({ ...kDefaults }).pricing, undefined);
  assert.deepEqual(buildRequest({ ...kDefaults, market: 'cn' }).pricing, { market: 'cn' });
  // {"cv":"v1","market":"cn"} in base64url is eyJjdiI6InYxIiwibWFya2V0IjoiY24ifQ
  const code = encodeShare({ ...kDefaults, market: 'cn' }, 'v1');
  assert.equal(code, '1.eyJjdiI6InYxIiwibWFya2V0IjoiY24ifQ');
  assert.equal(decodeShare(`#${code}`).state.market, 'cn');
  // A link made before the field existed opens in the default market.
  assert.equal(decodeShare('#1.eyJjdiI6InYxIn0').state.market, '');
});

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

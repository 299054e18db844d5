// SPDX-License-Identifier: MIT
// web/gguf-header.js on a GGUF header built byte by byte (tests/web/gguf-writer.mjs: the layout
// of llama.cpp's gguf.cpp: magic, version, tensor and KV counts, typed key/values, tensor infos).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GgufTruncated, ggufPlan, parseGgufHeader, readGgufFile } from '../../web/gguf-header.js';
import { gguf, kKv, kTensors } from './gguf-writer.mjs';

test('the header: magic, version, metadata and tensor infos', () => {
  const bytes = gguf({ kv: kKv, tensors: kTensors });
  const h = parseGgufHeader(bytes);
  assert.equal(h.version, 3);
  assert.equal(h.metadata['general.architecture'], 'llama');
  assert.equal(h.metadata['llama.block_count'], 2);
  assert.equal(h.metadata['llama.rope.freq_base'], 500000);
  // A long array keeps its length only.
  assert.deepEqual(h.metadata['tokenizer.ggml.tokens'], { type: 8, length: 100 });
  assert.equal(h.tensors.length, kTensors.length);
  assert.deepEqual(h.tensors[0], { name: 'token_embd.weight', dims: [64, 100], type: 12, typeName: 'Q4_K', offset: 0 });
  assert.equal(h.tensors[1].typeName, 'Q6_K');
  assert.equal(h.headerBytes, bytes.length);
});

test('the plan: an hf_config-like architecture and the file type as the weights format', () => {
  const p = ggufPlan(parseGgufHeader(gguf({ kv: kKv, tensors: kTensors })));
  assert.deepEqual(p.config, {
    model_type: 'llama', name: 'Tiny Llama <b>', num_hidden_layers: 2, hidden_size: 64,
    intermediate_size: 256, num_attention_heads: 8, num_key_value_heads: 2,
    max_position_embeddings: 8192, vocab_size: 100, tie_word_embeddings: false,
  });
  assert.equal(p.weights, 'gguf_q4_k_m');
  assert.equal(p.fileType, 'MOSTLY_Q4_K_M');
  assert.ok(p.exact);
  assert.deepEqual(p.notes, []);
  assert.deepEqual(p.types.map((t) => t[0]), ['Q4_K', 'Q6_K', 'F32']);
  assert.equal(p.types[0][1], 11);  // tensors of the most common type
});

test('a file type the engine lacks is approximated by the tensors\' bits per weight, and says so', () => {
  const kv = kKv.map((e) => (e[0] === 'general.file_type' ? ['general.file_type', 4, 13] : e));  // Q3_K_L, not an engine format
  const tensors = kTensors.map(([n, d, t]) => [n, d, t === 0 ? 0 : 23]);
  const p = ggufPlan(parseGgufHeader(gguf({ kv, tensors })));
  assert.equal(p.exact, false);
  assert.equal(p.weights, 'gguf_q4_0');  // IQ4_XS is 4.25 bits: the nearest engine format
  assert.equal(p.notes[0].key, 'gguf_approx');
  assert.equal(p.notes[0].args[0], 'MOSTLY_Q3_K_L');
});

test('short input asks for more bytes; a non-GGUF file and an old version are refused', async () => {
  const bytes = gguf({ kv: kKv, tensors: kTensors });
  assert.throws(() => parseGgufHeader(bytes.subarray(0, 200)), (e) => e instanceof GgufTruncated && e.need >= 400);
  assert.throws(() => parseGgufHeader(Buffer.from('PK\u0003\u0004 not gguf')), /not a GGUF file/);
  const v1 = Buffer.from(bytes);
  v1.writeUInt32LE(1, 4);
  assert.throws(() => parseGgufHeader(v1), /version 1/);
  // readGgufFile reads a slice first and more when the header needs it (Blob stands in for File).
  const h = await readGgufFile(new Blob([bytes, Buffer.alloc(10000)]), { first: 128 });
  assert.equal(h.tensors.length, kTensors.length);
  await assert.rejects(readGgufFile(new Blob([bytes.subarray(0, 300)]), { first: 64 }), /cut short/);
});

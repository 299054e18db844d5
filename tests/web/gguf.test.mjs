// SPDX-License-Identifier: MIT
// web/gguf-header.js on a GGUF header built here byte by byte (the layout of llama.cpp's
// gguf.cpp: magic, version, tensor and KV counts, typed key/values, tensor infos).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GgufTruncated, ggufPlan, parseGgufHeader, readGgufFile } from '../../web/gguf-header.js';

// A tiny GGUF writer: little-endian, 64-bit counts (version 3).
function gguf({ version = 3, kv, tensors }) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  const typed = (type, v) => {
    if (type === 4) u32(v);
    else if (type === 8) str(v);
    else if (type === 10) u64(v);
    else if (type === 6) { const b = Buffer.alloc(4); b.writeFloatLE(v); parts.push(b); }
    else throw new Error(`writer: type ${type}`);
  };
  parts.push(Buffer.from('GGUF', 'latin1'));
  u32(version);
  u64(tensors.length);
  u64(kv.length);
  for (const [key, type, v, itemType] of kv) {
    str(key);
    u32(type);
    if (type === 9) {
      u32(itemType);
      u64(v.length);
      for (const item of v) typed(itemType, item);
    } else typed(type, v);
  }
  let offset = 0;
  for (const [name, dims, type] of tensors) {
    str(name);
    u32(dims.length);
    for (const d of dims) u64(d);
    u32(type);
    u64(offset);
    offset += 4096;
  }
  return Buffer.concat(parts);
}

// A two-layer Llama-style model in Q4_K_M (general.file_type 15), 100 tokens.
const kTokens = Array.from({ length: 100 }, (_, i) => `tok${i}`);
const kTensors = [
  ['token_embd.weight', [64, 100], 12], ['output.weight', [64, 100], 14],
  ...[0, 1].flatMap((l) => [
    [`blk.${l}.attn_q.weight`, [64, 64], 12], [`blk.${l}.attn_k.weight`, [64, 16], 12],
    [`blk.${l}.attn_v.weight`, [64, 16], 14], [`blk.${l}.attn_output.weight`, [64, 64], 12],
    [`blk.${l}.ffn_gate.weight`, [64, 256], 12], [`blk.${l}.ffn_up.weight`, [64, 256], 12],
    [`blk.${l}.ffn_down.weight`, [256, 64], 14], [`blk.${l}.attn_norm.weight`, [64], 0],
  ]),
];
const kKv = [
  ['general.architecture', 8, 'llama'], ['general.name', 8, 'Tiny Llama <b>'],
  ['general.file_type', 4, 15], ['llama.block_count', 4, 2], ['llama.context_length', 4, 8192],
  ['llama.embedding_length', 4, 64], ['llama.feed_forward_length', 4, 256],
  ['llama.attention.head_count', 4, 8], ['llama.attention.head_count_kv', 4, 2],
  ['llama.rope.freq_base', 6, 500000], ['tokenizer.ggml.tokens', 9, kTokens, 8],
];

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
  const kv = kKv.map((e) => (e[0] === 'general.file_type' ? ['general.file_type', 4, 30] : e));  // IQ4_XS
  const tensors = kTensors.map(([n, d, t]) => [n, d, t === 0 ? 0 : 23]);
  const p = ggufPlan(parseGgufHeader(gguf({ kv, tensors })));
  assert.equal(p.exact, false);
  assert.equal(p.weights, 'gguf_q4_0');  // IQ4_XS is 4.25 bits: the nearest engine format
  assert.equal(p.notes[0].key, 'gguf_approx');
  assert.equal(p.notes[0].args[0], 'MOSTLY_IQ4_XS');
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

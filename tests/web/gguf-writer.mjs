// SPDX-License-Identifier: MIT
// A GGUF header built byte by byte (llama.cpp's gguf.cpp layout: magic, version, tensor and KV
// counts, typed key/values, tensor infos), for tests/web/gguf.test.mjs and the browser test.
// A tiny GGUF writer: little-endian, 64-bit counts (version 3).
export function gguf({ version = 3, kv, tensors }) {
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
export const kTokens = Array.from({ length: 100 }, (_, i) => `tok${i}`);
export const kTensors = [
  ['token_embd.weight', [64, 100], 12], ['output.weight', [64, 100], 14],
  ...[0, 1].flatMap((l) => [
    [`blk.${l}.attn_q.weight`, [64, 64], 12], [`blk.${l}.attn_k.weight`, [64, 16], 12],
    [`blk.${l}.attn_v.weight`, [64, 16], 14], [`blk.${l}.attn_output.weight`, [64, 64], 12],
    [`blk.${l}.ffn_gate.weight`, [64, 256], 12], [`blk.${l}.ffn_up.weight`, [64, 256], 12],
    [`blk.${l}.ffn_down.weight`, [256, 64], 14], [`blk.${l}.attn_norm.weight`, [64], 0],
  ]),
];
export const kKv = [
  ['general.architecture', 8, 'llama'], ['general.name', 8, 'Tiny Llama <b>'],
  ['general.file_type', 4, 15], ['llama.block_count', 4, 2], ['llama.context_length', 4, 8192],
  ['llama.embedding_length', 4, 64], ['llama.feed_forward_length', 4, 256],
  ['llama.attention.head_count', 4, 8], ['llama.attention.head_count_kv', 4, 2],
  ['llama.rope.freq_base', 6, 500000], ['tokenizer.ggml.tokens', 9, kTokens, 8],
];

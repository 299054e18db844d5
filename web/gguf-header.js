// @ts-check
// A GGUF file's header, read in the browser: the magic, the version, the metadata key/values and
// the tensor infos (name, dimensions, ggml type), as llama.cpp's gguf.cpp writes them and
// gguf-parser reads them (GGUF v2 and v3: 64-bit counts, little-endian). Only the first
// megabytes are read (File.slice): the header sits before the tensor data. Then what the page
// plans with: an hf_config-like architecture and a llama.cpp weights format. Loaded on first use.

// ggml_type: [name, elements per block, bytes per block] (ggml.c's type_traits).
const kGgmlTypes = {
  0: ['F32', 1, 4], 1: ['F16', 1, 2], 2: ['Q4_0', 32, 18], 3: ['Q4_1', 32, 20], 6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24], 8: ['Q8_0', 32, 34], 9: ['Q8_1', 32, 36], 10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110], 12: ['Q4_K', 256, 144], 13: ['Q5_K', 256, 176], 14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292], 16: ['IQ2_XXS', 256, 66], 17: ['IQ2_XS', 256, 74], 18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50], 20: ['IQ4_NL', 32, 18], 21: ['IQ3_S', 256, 110], 22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136], 24: ['I8', 1, 1], 25: ['I16', 1, 2], 26: ['I32', 1, 4], 27: ['I64', 1, 8],
  28: ['F64', 1, 8], 29: ['IQ1_M', 256, 56], 30: ['BF16', 1, 2], 34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66], 39: ['MXFP4', 32, 17],
};

export function ggmlTypeName(type) { return kGgmlTypes[type]?.[0] ?? `type ${type}`; }

/// Bits per weight of a ggml type (null when unknown).
export function ggmlBits(type) {
  const t = kGgmlTypes[type];
  return t ? (t[2] * 8) / t[1] : null;
}

// llama_ftype (general.file_type) -> the engine's weights format, where the engine has it.
const kFileTypes = {
  0: ['ALL_F32', 'fp32'], 1: ['MOSTLY_F16', 'fp16'], 2: ['MOSTLY_Q4_0', 'gguf_q4_0'],
  3: ['MOSTLY_Q4_1', 'gguf_q4_1'], 7: ['MOSTLY_Q8_0', 'gguf_q8_0'], 8: ['MOSTLY_Q5_0', 'gguf_q5_0'],
  9: ['MOSTLY_Q5_1', 'gguf_q5_1'], 10: ['MOSTLY_Q2_K', 'gguf_q2_k'], 11: ['MOSTLY_Q3_K_S', null],
  12: ['MOSTLY_Q3_K_M', 'gguf_q3_k_m'], 13: ['MOSTLY_Q3_K_L', null], 14: ['MOSTLY_Q4_K_S', null],
  15: ['MOSTLY_Q4_K_M', 'gguf_q4_k_m'], 16: ['MOSTLY_Q5_K_S', null], 17: ['MOSTLY_Q5_K_M', 'gguf_q5_k_m'],
  18: ['MOSTLY_Q6_K', 'gguf_q6_k'], 19: ['MOSTLY_IQ2_XXS', null], 20: ['MOSTLY_IQ2_XS', 'gguf_iq2_xs'],
  21: ['MOSTLY_Q2_K_S', null], 22: ['MOSTLY_IQ3_XS', null], 23: ['MOSTLY_IQ3_XXS', 'gguf_iq3_xxs'],
  24: ['MOSTLY_IQ1_S', null], 25: ['MOSTLY_IQ4_NL', null], 26: ['MOSTLY_IQ3_S', null],
  27: ['MOSTLY_IQ3_M', null], 28: ['MOSTLY_IQ2_S', null], 29: ['MOSTLY_IQ2_M', null],
  30: ['MOSTLY_IQ4_XS', 'gguf_iq4_xs'], 31: ['MOSTLY_IQ1_M', null], 32: ['MOSTLY_BF16', 'bf16'],
  36: ['MOSTLY_TQ1_0', null], 37: ['MOSTLY_TQ2_0', null], 38: ['MOSTLY_MXFP4_MOE', null],
};

// The engine's formats with their average bits per weight over a 7B-class model's tensors
// (llama.cpp's quantize table), for the nearest match when the file type is not one of them.
/** @type {Array<[string, number]>} */
const kFormatBits = [
  ['gguf_iq2_xs', 2.31], ['gguf_q2_k', 2.96], ['gguf_q3_k_m', 3.91], ['gguf_q4_0', 4.55],
  ['gguf_q4_k_m', 4.89], ['gguf_q5_k_m', 5.70], ['gguf_q6_k', 6.56], ['gguf_q8_0', 8.50],
  ['fp16', 16], ['fp32', 32],
];

/// Thrown when the bytes end inside the header: `need` is a size to try again with.
export class GgufTruncated extends Error {
  constructor(need) { super('the GGUF header runs past the bytes read'); this.need = need; }
}

const kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
const kSmallArray = 64;     // longer arrays keep their length only (tokens, merges, scores)

/// Parses a GGUF header from an ArrayBuffer or Uint8Array. Answers {version, metadata, tensors,
/// headerBytes}; metadata maps key -> value (an array longer than 64 items becomes
/// {type, length}); each tensor is {name, dims, type, typeName, offset}.
export function parseGgufHeader(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf8 = new TextDecoder('utf-8', { fatal: false });
  let at = 0;
  const need = (n) => {
    if (at + n > bytes.byteLength) throw new GgufTruncated(Math.max(2 * bytes.byteLength, at + n));
  };
  const u32 = () => { need(4); const v = view.getUint32(at, true); at += 4; return v; };
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(at, true);
    at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('a GGUF count or size is out of range');
    return Number(v);
  };
  const str = () => {
    const n = u64();
    need(n);
    const s = utf8.decode(bytes.subarray(at, at + n));
    at += n;
    return s;
  };
  const scalar = {
    0: () => { need(1); return view.getUint8(at++); }, 1: () => { need(1); return view.getInt8(at++); },
    2: () => { need(2); const v = view.getUint16(at, true); at += 2; return v; },
    3: () => { need(2); const v = view.getInt16(at, true); at += 2; return v; },
    4: u32, 5: () => { need(4); const v = view.getInt32(at, true); at += 4; return v; },
    6: () => { need(4); const v = view.getFloat32(at, true); at += 4; return v; },
    7: () => { need(1); return view.getUint8(at++) !== 0; }, 8: str,
    10: u64, 11: () => { need(8); const v = Number(view.getBigInt64(at, true)); at += 8; return v; },
    12: () => { need(8); const v = view.getFloat64(at, true); at += 8; return v; },
  };
  const value = (type) => {
    if (type === 9) {
      const itemType = u32();
      const length = u64();
      if (itemType === 9) throw new Error('nested GGUF arrays are not read');
      const read = scalar[itemType];
      if (!read) throw new Error(`unknown GGUF value type ${itemType}`);
      if (length <= kSmallArray) return Array.from({ length }, () => read());
      // Skipped item by item for strings, in one step for fixed-size items.
      const size = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 }[itemType];
      if (size) { need(size * length); at += size * length; } else for (let i = 0; i < length; ++i) str();
      return { type: itemType, length };
    }
    const read = scalar[type];
    if (!read) throw new Error(`unknown GGUF value type ${type}`);
    return read();
  };

  if (bytes.byteLength < 4 || view.getUint32(0, true) !== kMagic) {
    throw new Error('not a GGUF file (its first four bytes are not "GGUF")');
  }
  at = 4;
  const version = u32();
  if (version < 2 || version > 3) throw new Error(`GGUF version ${version} is not read (2 and 3 are)`);
  const tensorCount = u64();
  const kvCount = u64();
  const metadata = {};
  for (let i = 0; i < kvCount; ++i) {
    const key = str();
    metadata[key] = value(u32());
  }
  const tensors = [];
  for (let i = 0; i < tensorCount; ++i) {
    const name = str();
    const nDims = u32();
    if (nDims > 8) throw new Error(`tensor ${name}: ${nDims} dimensions`);
    const dims = Array.from({ length: nDims }, () => u64());
    const type = u32();
    const offset = u64();
    tensors.push({ name, dims, type, typeName: ggmlTypeName(type), offset });
  }
  return { version, metadata, tensors, headerBytes: at };
}

/// Reads a File's header: the first 8 MiB, more (up to 256 MiB) when the header needs it
/// (a large vocabulary's token and merge arrays come before the tensor infos).
export async function readGgufFile(file, { first = 8 << 20, most = 256 << 20 } = {}) {
  for (let size = Math.min(first, file.size); ;) {
    try {
      return parseGgufHeader(await file.slice(0, size).arrayBuffer());
    } catch (err) {
      if (!(err instanceof GgufTruncated) || size >= file.size || size >= most) {
        if (err instanceof GgufTruncated) throw new Error('the GGUF header is cut short (the file ends inside it, or it is over 256 MiB)');
        throw err;
      }
      size = Math.min(file.size, most, err.need);
    }
  }
}

// general.architecture -> the config.json model_type the engine reads.
const kArchitectures = {
  llama: 'llama', qwen2: 'qwen2', qwen2moe: 'qwen2_moe', qwen3: 'qwen3', qwen3moe: 'qwen3_moe',
  gemma: 'gemma', gemma2: 'gemma2', gemma3: 'gemma3_text', phi3: 'phi3', deepseek2: 'deepseek_v3',
  gpt2: 'gpt2', starcoder: 'gpt_bigcode', falcon: 'falcon', bloom: 'bloom', 'command-r': 'cohere',
  cohere2: 'cohere2', olmo2: 'olmo2', 'gpt-oss': 'gpt_oss', llama4: 'llama4_text', glm4moe: 'glm4_moe',
  smollm3: 'smollm3',
};

const elements = (dims) => dims.reduce((a, b) => a * b, 1);

/// What the page plans with: {config (config.json-like), weights (a format name), fileType
/// (llama_ftype's name or null), exact (the file type is one of the engine's formats), bits
/// (average bits per weight over the tensors), types ([[typeName, tensors, elements]], most
/// elements first), notes (what was approximated, as {key, args} for the page's words)}.
export function ggufPlan(header) {
  const md = header.metadata;
  const arch = String(md['general.architecture'] ?? '');
  if (!arch) throw new Error('the GGUF header names no general.architecture');
  const k = (name) => md[`${arch}.${name}`];
  const notes = [];
  const modelType = kArchitectures[arch];
  if (!modelType) notes.push({ key: 'gguf_arch_unknown', args: [arch] });
  const config = { model_type: modelType ?? arch };
  if (typeof md['general.name'] === 'string') config.name = md['general.name'];
  const put = (key, v) => { if (Number.isFinite(v)) config[key] = v; };
  put('num_hidden_layers', k('block_count'));
  put('hidden_size', k('embedding_length'));
  const ff = k('feed_forward_length');
  put('intermediate_size', Array.isArray(ff) ? Math.max(...ff) : ff);  // per-layer lists: the widest
  const heads = k('attention.head_count');
  put('num_attention_heads', Array.isArray(heads) ? Math.max(...heads) : heads);
  const kv = k('attention.head_count_kv');
  put('num_key_value_heads', Array.isArray(kv) ? Math.max(...kv) : kv);
  put('max_position_embeddings', k('context_length'));
  put('head_dim', k('attention.key_length'));
  put('sliding_window', k('attention.sliding_window'));
  const experts = k('expert_count');
  if (experts > 0) {
    put(arch === 'qwen2moe' || arch === 'qwen3moe' ? 'num_experts'
      : arch === 'deepseek2' || arch === 'glm4moe' ? 'n_routed_experts' : 'num_local_experts', experts);
    put('num_experts_per_tok', k('expert_used_count'));
    put('moe_intermediate_size', k('expert_feed_forward_length'));
    put('n_shared_experts', k('expert_shared_count'));
    put('first_k_dense_replace', k('leading_dense_block_count'));
  }
  if (arch === 'deepseek2') {
    put('kv_lora_rank', k('attention.kv_lora_rank'));
    put('q_lora_rank', k('attention.q_lora_rank'));
    put('qk_rope_head_dim', k('rope.dimension_count'));
  }
  const tokens = md['tokenizer.ggml.tokens'];
  const vocab = Array.isArray(tokens) ? tokens.length : tokens?.length ?? k('vocab_size');
  put('vocab_size', vocab);
  const names = new Set(header.tensors.map((t) => t.name));
  config.tie_word_embeddings = !names.has('output.weight');

  const byType = new Map();
  let weighted = 0;
  let total = 0;
  for (const t of header.tensors) {
    const n = elements(t.dims);
    const row = byType.get(t.typeName) ?? [t.typeName, 0, 0];
    row[1] += 1;
    row[2] += n;
    byType.set(t.typeName, row);
    const bits = ggmlBits(t.type);
    if (bits !== null) { weighted += bits * n; total += n; }
  }
  const types = [...byType.values()].sort((a, b) => b[2] - a[2]);
  const bits = total ? weighted / total : null;
  const ft = md['general.file_type'];
  const known = kFileTypes[ft];
  let weights = known?.[1] ?? null;
  const exact = Boolean(weights);
  if (!weights) {
    // Not a format the engine has: the nearest by the tensors' average bits per weight.
    let best = kFormatBits[0];
    for (const f of kFormatBits) if (Math.abs(f[1] - (bits ?? 4.89)) < Math.abs(best[1] - (bits ?? 4.89))) best = f;
    weights = best[0];
    notes.push({ key: 'gguf_approx', args: [known?.[0] ?? (ft === undefined ? '—' : String(ft)),
      bits === null ? '?' : bits.toFixed(2), weights] });
  }
  return { arch, config, weights, fileType: known?.[0] ?? null, exact, bits, types, notes,
    params: total };
}

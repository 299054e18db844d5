// @ts-check
// A model from the Hugging Face Hub, read by the browser itself: config.json, and when the repo
// has them model.safetensors.index.json (the parameter count from its metadata, the weight
// map's tensors) and hf_quant_config.json (ModelOpt's quantisation). All three are small files
// kept in git and served by huggingface.co itself (resolve only redirects LFS files to a CDN),
// so the CSP's connect-src needs that one host. Loaded on first use.

export const kHubBase = 'https://huggingface.co';

/// Why a read failed: 'gated' (401/403), 'missing' (404), 'offline' (no answer: network
/// error or blocked), 'bad' (not a config.json), 'http' (another status).
export class HubError extends Error {
  constructor(kind, id, detail) { super(`${id}: ${kind}${detail ? ` (${detail})` : ''}`); this.kind = kind; this.id = id; }
}

const fileUrl = (id, file) => `${kHubBase}/${id.split('/').map(encodeURIComponent).join('/')}/resolve/main/${file}`;

async function get(id, file, fetchImpl, optional) {
  let res;
  try {
    res = await fetchImpl(fileUrl(id, file), { credentials: 'omit', redirect: 'follow' });
  } catch (err) {
    if (optional) return null;
    throw new HubError('offline', id, err.message);
  }
  if (res.ok) {
    try { return await res.json(); } catch (err) {
      if (optional) return null;
      throw new HubError('bad', id, err.message);
    }
  }
  if (optional) return null;
  if (res.status === 401 || res.status === 403) throw new HubError('gated', id, String(res.status));
  if (res.status === 404) throw new HubError('missing', id, '404');
  throw new HubError('http', id, String(res.status));
}

// bytes per element of a safetensors dtype
const kDtypeBytes = { F64: 8, F32: 4, BF16: 2, F16: 2, F8_E4M3: 1, F8_E5M2: 1, I8: 1, U8: 1, I32: 4, I64: 8 };
const kTorchDtype = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' };

/// Reads a Hub model. Answers {id, config (with hf_quant_config.json's `quantization` merged in
/// where config.json has none), params ({count, exact} or null), tensors (the weight map's
/// count or null), quant (a short description or null), weights (the engine format its
/// quantisation implies, or null)}; throws HubError.
export async function readHubModel(id, fetchImpl = fetch) {
  const config = await get(id, 'config.json', fetchImpl, false);
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new HubError('bad', id, 'not an object');
  const [index, hfQuant] = await Promise.all([
    get(id, 'model.safetensors.index.json', fetchImpl, true),
    get(id, 'hf_quant_config.json', fetchImpl, true),
  ]);
  if (hfQuant?.quantization && typeof hfQuant.quantization === 'object' && !config.quantization_config
      && !config.quantization) {
    config.quantization = hfQuant.quantization;
  }
  let params = null;
  let tensors = null;
  if (index && typeof index === 'object') {
    const md = index.metadata ?? {};
    if (Number.isFinite(md.total_parameters)) params = { count: md.total_parameters, exact: true };
    else if (Number.isFinite(Number(md.total_size))) {
      // Bytes over the checkpoint's element size: exact for a one-dtype checkpoint.
      const dtype = kTorchDtype[config.torch_dtype ?? config.dtype ?? 'bfloat16'] ?? 'BF16';
      params = { count: Number(md.total_size) / kDtypeBytes[dtype], exact: false };
    }
    if (index.weight_map && typeof index.weight_map === 'object') tensors = Object.keys(index.weight_map).length;
  }
  const { quant, weights } = quantOf(config);
  return { id, config, params, tensors, quant, weights };
}

// The quantisation a config declares and the engine's format for it (null: none it has).
export function quantOf(config) {
  const q = config.quantization_config ?? config.quantization;
  if (!q || typeof q !== 'object') return { quant: null, weights: null };
  const method = String(q.quant_method ?? q.quant_algo ?? (q.load_in_4bit ? 'bitsandbytes' : '')).toLowerCase();
  const bits = Number(q.bits ?? q.w_bit ?? (q.load_in_4bit ? 4 : q.load_in_8bit ? 8 : NaN));
  const quant = [method || 'quantized', Number.isFinite(bits) ? `${bits}-bit` : ''].filter(Boolean).join(' ');
  let weights = null;
  if (method === 'gptq' && bits === 4) weights = 'gptq_int4';
  else if (method === 'awq' && bits === 4) weights = 'awq_int4';
  else if (method === 'bitsandbytes') weights = bits === 8 ? 'int8' : q.bnb_4bit_quant_type === 'nf4' ? 'nf4' : 'int4';
  else if (method === 'fp8' || method.startsWith('fp8') || /fp8/.test(String(q.quant_algo ?? ''))) weights = 'fp8';
  return { quant, weights };
}

/// What the page shows of a config: its name, layers, attention kind and context
/// ({key, args} for the page's words).
export function describeConfig(config) {
  const c = config.text_config && typeof config.text_config === 'object' ? { ...config, ...config.text_config } : config;
  const heads = c.num_attention_heads ?? c.n_head;
  const kv = c.num_key_value_heads ?? c.num_kv_heads ?? heads;
  let attention;
  if (c.kv_lora_rank) attention = { key: 'hub_attn_mla', args: [c.kv_lora_rank] };
  else if (kv === 1 || c.multi_query) attention = { key: 'hub_attn_mqa', args: [heads] };
  else if (kv && heads && kv < heads) attention = { key: 'hub_attn_gqa', args: [heads, kv] };
  else attention = { key: 'hub_attn_mha', args: [heads ?? '?'] };
  return {
    layers: c.num_hidden_layers ?? c.n_layer ?? null,
    attention,
    window: c.sliding_window && c.use_sliding_window !== false ? c.sliding_window : null,
    context: c.max_position_embeddings ?? c.n_positions ?? null,
    type: c.model_type ?? config.model_type ?? null,
    experts: c.num_local_experts ?? c.num_experts ?? c.n_routed_experts ?? null,
  };
}

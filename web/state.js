// @ts-check
// The page's state: the six lines of requirements (purpose, model, precision, duration or
// latency, card limit, site), their defaults, the engine request they make, and the share
// link that carries them.

// Every default is shown in its field; the engine reports the rest in request_normalized.
export const kDefaults = Object.freeze({
  kind: 'lora', model: 'llama-3.1-8b', hf: '', seq_len: 4096, prompt_tokens: 1024,
  output_tokens: 256, weights: 'bf16', tokens: '1e8', deadline_h: '', concurrency: 16,
  ttft_ms: '', tpot_ms: '', max_gpus: 64, budget_usd: '', node_power_w: '', cooling: '',
  objective: 'default', layers: '', hidden: '', intermediate: '', heads: '', kv_heads: '',
  vocab: '', cal_compute: '', cal_bandwidth: '', cal_memory: '', cal_interconnect: '', cal_slack: '',
  cal_on: '', cal_peak: '', cal_setup: '', waits: '', fleet: '', framework: '', rps: '', prompt_p95: '',
  output_p95: '', prefix_hit: '', global_batch: '', global_batch_unit: '', headroom_pct: '', chunked_loss: '',
  optimizer_states: '', optimizer_kernel: '', compile: '', recompute: '', recompute_every: '', pp_schedule: '',
  virtual_stages: '', overlap_tp_comm: '', overlap_grad_reduce: '', overlap_param_gather: '',
  srv_version: '', srv_share: '', srv_max_seqs: '', srv_batched: '', srv_max_model_len: '',
  srv_eager: '', srv_n_ctx: '', srv_cache_k: '', srv_cache_v: '', hf_id: '', market: '',
});

// The explicit-architecture fields (the contract's model numbers); layers turns them on.
export const kArchitecture = ['layers', 'hidden', 'intermediate', 'heads', 'kv_heads', 'vocab'];

export const kTraining = ['pretrain', 'full_finetune', 'lora', 'qlora'];

// A Hugging Face id typed into the model field (owner/name; presets have no '/'). `hf_id` is
// the source of the config in `hf`: such an id when the page read it from the Hub (the share
// link carries both, so it opens offline), 'gguf:FILE' for a GGUF file's header, else ''.
export function hubIdOf(text) {
  const s = String(text ?? '').trim();
  return s.length <= 160 && /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s) ? s : null;
}

// Fields the page turns into numbers; an empty optional one is left out of the request.
const kNumbers = [...kArchitecture, 'cal_compute', 'cal_bandwidth', 'cal_memory', 'cal_interconnect',
  'cal_slack', 'cal_peak', 'seq_len', 'prompt_tokens', 'output_tokens', 'tokens', 'deadline_h',
  'concurrency', 'ttft_ms', 'tpot_ms', 'max_gpus', 'budget_usd', 'node_power_w', 'rps', 'prompt_p95',
  'output_p95', 'prefix_hit', 'global_batch', 'headroom_pct', 'recompute_every', 'virtual_stages',
  'srv_share', 'srv_max_seqs', 'srv_batched', 'srv_max_model_len', 'srv_n_ctx'];

// The contract's second-round training fields: parallel.overlap's three flags, each
// 'on', 'off' or '' (the stack's default, which request_normalized reports).
export const kOverlap = ['tp_comm', 'grad_reduce', 'param_gather'];

// code and params let the page word the problem in the user's language (form.js errorText).
export class InputError extends Error {
  constructor(field, message, code = '', params = {}) {
    super(`${field}: ${message}`);
    this.field = field;
    this.code = code;
    this.params = params;
  }
}

// Full-width digits, point, minus and comma from a Chinese IME (０-９ ． － ，) read as ASCII.
export function asciiDigits(text) {
  return String(text ?? '').replace(/[\uFF10-\uFF19\uFF0E\uFF0D\uFF0B]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0))
    .replace(/\u3002/g, '.');
}

// A percentage field, checked in the unit the user typed it in ("150 %", not the engine's
// "1.5"); answers the fraction.
function percent(state, key, max) {
  const v = num(state, key);
  if (v === undefined) return undefined;
  if (v < 0 || v > max) throw new InputError(key, `must be between 0 and ${max} %, got ${v} %`);
  return v / 100;
}

function num(state, key) {
  const raw = String(state[key] ?? '').trim();
  if (raw === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new InputError(key, `is not a number: "${raw}"`, 'not_a_number', { raw });
  return v;
}

// Builds the engine request. Range checks are the engine's: it names the JSON field.
export function buildRequest(state) {
  const hubId = hubIdOf(state.hf_id);
  const model = state.hf.trim() ? { hf_config: parseConfig(state.hf), ...(hubId ? { hf_id: hubId } : {}) }
    : String(state.layers ?? '').trim() ? Object.fromEntries(kArchitecture.map((k) => [k, num(state, k)]))
      : { preset: state.model };
  const training = kTraining.includes(state.kind);
  const workload = { kind: state.kind };
  if (training) {
    workload.seq_len = num(state, 'seq_len');
    workload.tokens = num(state, 'tokens');
    workload.global_batch = globalBatchOf(state);
  } else {
    workload.prompt_tokens = num(state, 'prompt_tokens');
    workload.output_tokens = num(state, 'output_tokens');
    workload.concurrency = num(state, 'concurrency');
  }
  const constraints = { max_gpus: num(state, 'max_gpus'), objective: state.objective };
  const deadline = training ? num(state, 'deadline_h') : undefined;
  if (deadline !== undefined) constraints.deadline_s = deadline * 3600;
  for (const k of ['budget_usd', 'node_power_w']) constraints[k] = num(state, k);
  if (!training) for (const k of ['ttft_ms', 'tpot_ms']) constraints[k] = num(state, k);
  if (state.cooling) constraints.cooling = state.cooling;
  const waits = training ? parseWaits(state.waits) : undefined;
  if (waits) constraints.wait_s = waits;
  const request = { model, workload, precision: { weights: state.weights }, constraints };
  if (training) Object.assign(request, trainingTechniques(state, request.precision));
  const headroom = percent(state, 'headroom_pct', 1000);
  if (headroom !== undefined) request.headroom = headroom;
  if (state.framework) request.framework = state.framework;
  const serving = training ? undefined : servingOf(state);
  if (serving) request.serving = serving;
  const calibration = calibrationOf(state);
  if (calibration) request.calibration = calibration;
  // Whose offers price the cards ('' is the engine's default, global): older links made the
  // request they made.
  if (state.market) request.pricing = { market: state.market };
  return JSON.parse(JSON.stringify(request));  // drops the undefined (empty optional) fields
}

// The serving engine's own settings (the contract's `serving`): one share field and one
// batched-token field, each sent under the chosen engine's own name; a setting the engine does
// not have is not sent. Nothing without a serving engine, so older links make the request
// they made.
const kShareName = { vllm: 'gpu_memory_utilization', sglang: 'mem_fraction_static',
  tensorrt_llm: 'kv_cache_free_gpu_mem_fraction' };
export const kServingEngines = ['vllm', 'sglang', 'tensorrt_llm', 'llama_cpp'];

function servingOf(state) {
  const fw = state.framework;
  if (!kServingEngines.includes(fw)) return undefined;
  const cpp = fw === 'llama_cpp';
  const s = {};
  const version = String(state.srv_version ?? '').trim();
  if (version) s.version = version;
  if (!cpp) {
    s[kShareName[fw]] = num(state, 'srv_share');
    s.max_num_seqs = num(state, 'srv_max_seqs');
    s.max_num_batched_tokens = num(state, 'srv_batched');
    s.max_model_len = num(state, 'srv_max_model_len');
    if (state.srv_eager === '1') s.enforce_eager = true;
  } else {
    s.n_ubatch = num(state, 'srv_batched');
    s.n_ctx = num(state, 'srv_n_ctx');
    if (state.srv_cache_k) s.cache_type_k = state.srv_cache_k;
    if (state.srv_cache_v) s.cache_type_v = state.srv_cache_v;
  }
  const set = Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
  return Object.keys(set).length ? set : undefined;
}

// Training's optional techniques: only what the form sets is sent (empty: the engine's or the
// stack's default), so the default request and older links make the request they made.
function trainingTechniques(state, precision) {
  if (state.optimizer_states) precision.optimizer_states = state.optimizer_states;
  const mt = {};
  if (state.chunked_loss === '1') mt.chunked_loss = true;
  if (state.compile === '1') mt.compile = true;
  if (state.recompute) mt.recompute = state.recompute;
  if (state.recompute === 'every_n_layers') mt.recompute_every = num(state, 'recompute_every');
  const parallel = {};
  if (state.pp_schedule) parallel.pp_schedule = state.pp_schedule;
  if (state.pp_schedule === 'interleaved') parallel.virtual_stages = num(state, 'virtual_stages');
  const overlap = {};
  for (const k of kOverlap) {
    const v = state[`overlap_${k}`];
    if (v === 'on' || v === 'off') overlap[k] = v === 'on';
  }
  if (Object.keys(overlap).length) parallel.overlap = overlap;
  const out = {};
  if (state.optimizer_kernel) out.optimizer_kernel = state.optimizer_kernel;
  if (Object.keys(mt).length) out.memory_techniques = mt;
  if (Object.keys(parallel).length) out.parallel = parallel;
  return out;
}

// The global batch in sequences (the request's unit), or undefined for the engine's default.
// Given in tokens, it is converted with the sequence length and rounded to whole sequences.
export function globalBatchOf(state) {
  const v = num(state, 'global_batch');
  if (v === undefined || state.global_batch_unit !== 'tokens') return v;
  const seqLen = num(state, 'seq_len');
  if (seqLen === undefined || !(seqLen > 0)) {
    throw new InputError('global_batch', 'a batch in tokens needs the sequence length to convert it to sequences', 'batch_needs_seq_len');
  }
  const sequences = Math.round(v / seqLen);
  if (!(sequences >= 1)) {
    throw new InputError('global_batch', `${v} tokens is less than one sequence of ${seqLen} tokens`, 'batch_below_sequence', { tokens: v, seq_len: seqLen });
  }
  return sequences;
}

// gpuplan traffic's request: the plan request plus the traffic fields (the mean lengths are
// the form's prompt and output; the hit rate is entered in percent). Null when no rate is set.
export function trafficRequest(state, request) {
  if (!String(state.rps ?? '').trim() || request.workload?.kind !== 'inference') return null;
  const mean = (k, v) => ({ mean: v, p95: num(state, k) ?? v });
  const traffic = {
    requests_per_s: num(state, 'rps'),
    prompt_tokens: mean('prompt_p95', request.workload.prompt_tokens ?? 1024),
    output_tokens: mean('output_p95', request.workload.output_tokens ?? 256),
  };
  const hit = percent(state, 'prefix_hit', 100);
  if (hit !== undefined) traffic.prefix_cache_hit = hit;
  return { ...request, traffic };
}

// Calibration factors as page state (share link and local storage carry these keys).
export const kCalibrationKeys = { cal_compute: 'compute', cal_bandwidth: 'bandwidth', cal_memory: 'memory',
  cal_interconnect: 'interconnect', cal_slack: 'allocator_slack', cal_on: 'measured_on',
  cal_peak: 'measured_peak_bytes', cal_setup: 'measured_setup' };
// The calibration's text fields: the card it was measured on, the setup a measured peak is for.
const kCalibrationText = new Set(['measured_on', 'measured_setup']);

export function calibrationState(factors) {
  const s = {};
  for (const [key, name] of Object.entries(kCalibrationKeys)) {
    const v = factors?.[name];
    s[key] = v === null || v === undefined ? '' : String(v);
  }
  return s;
}

// The request's `calibration`, or undefined when the state holds none.
export function calibrationOf(state) {
  const out = {};
  for (const [key, name] of Object.entries(kCalibrationKeys)) {
    const raw = String(state[key] ?? '').trim();
    if (raw === '') continue;
    if (kCalibrationText.has(name)) { out[name] = raw; continue; }
    const v = Number(raw);
    if (!Number.isFinite(v)) throw new InputError(key, `is not a number: "${raw}"`, 'not_a_number', { raw });
    out[name] = v;
  }
  return Object.keys(out).some((k) => !kCalibrationText.has(k)) ? out : undefined;
}

// "h100-sxm-80gb: 14, b200-sxm-180gb: 30" (card: days in the queue) -> {id: seconds}.
export function parseWaits(text) {
  const parts = String(text ?? '').split(/[,;\n]+/).map((s) => s.trim()).filter(Boolean);
  if (!parts.length) return undefined;
  const out = {};
  for (const part of parts) {
    const m = /^([A-Za-z0-9._-]+)\s*[:=]\s*([0-9.eE+]+)$/.exec(part);
    const days = m && Number(m[2]);
    if (!m || !Number.isFinite(days) || days < 0) {
      throw new InputError('waits', `write card: days pairs like "h100-sxm-80gb: 14", got "${part}"`, 'waits_format', { raw: part });
    }
    out[m[1]] = days * 86400;
  }
  return out;
}

function parseConfig(text) {
  let v;
  try { v = JSON.parse(text); } catch (e) { throw new InputError('hf_config', e.message, 'hf_not_json'); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    throw new InputError('hf_config', 'must be a JSON object (a config.json)', 'hf_not_object');
  }
  return v;
}

// Form values are strings; a decoded state holds only known fields, as text. A field the link
// leaves out takes the default of the link's own format.
function validState(raw, defaults = kDefaults) {
  const s = Object.fromEntries(Object.entries(kDefaults).map(([k, v]) => [k, String(defaults[k] ?? v)]));
  if (raw && typeof raw === 'object') {
    for (const k of Object.keys(kDefaults)) {
      if (raw[k] !== undefined && raw[k] !== null) s[k] = String(raw[k]);
    }
  }
  // A switch is on ('1') or off (''): nothing else a link holds turns it on.
  for (const k of ['chunked_loss', 'compile']) s[k] = s[k] === '1' ? '1' : '';
  // A calibration factor has no field to correct it in: one that is not a positive number is
  // dropped here rather than blocking every plan.
  for (const [key, name] of Object.entries(kCalibrationKeys)) {
    if (!kCalibrationText.has(name) && s[key] !== '' && !(Number(s[key]) > 0)) s[key] = '';
  }
  return s;
}

// Share links: '#1.' + base64url(JSON of the fields that differ from the defaults, plus the
// catalog version 'cv' and the engine version 'ev'). The leading 1 is the format version.
// A link stores only what differs from the defaults, so the defaults it was made against are
// part of its format: each format's are frozen here, and changing a default means a new format
// whose decoder reads the old links with their own defaults. A new field whose default is empty
// (absent from every older link) may join the current format (tests/web/golden.test.mjs and
// golden-links.json hold the page to that).
const kFormat = '1';
const kFormatDefaults = Object.freeze({
  1: Object.freeze({
    kind: 'lora', model: 'llama-3.1-8b', hf: '', seq_len: 4096, prompt_tokens: 1024,
    output_tokens: 256, weights: 'bf16', tokens: '1e8', deadline_h: '', concurrency: 16,
    ttft_ms: '', tpot_ms: '', max_gpus: 64, budget_usd: '', node_power_w: '', cooling: '',
    objective: 'default', layers: '', hidden: '', intermediate: '', heads: '', kv_heads: '',
    vocab: '', cal_compute: '', cal_bandwidth: '', cal_memory: '', cal_interconnect: '',
    cal_slack: '', cal_on: '', cal_peak: '', cal_setup: '', waits: '', fleet: '', framework: '', rps: '',
    prompt_p95: '', output_p95: '', prefix_hit: '', global_batch: '', global_batch_unit: '', headroom_pct: '',
    chunked_loss: '', optimizer_states: '', optimizer_kernel: '', compile: '', recompute: '', recompute_every: '',
    pp_schedule: '', virtual_stages: '', overlap_tp_comm: '', overlap_grad_reduce: '',
    overlap_param_gather: '', srv_version: '', srv_share: '', srv_max_seqs: '', srv_batched: '',
    srv_max_model_len: '', srv_eager: '', srv_n_ctx: '', srv_cache_k: '', srv_cache_v: '',
    hf_id: '', market: '',
  }),
});
export const kCurrentFormatDefaults = kFormatDefaults[kFormat];

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(code) {
  const bin = atob(code.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

export function encodeShare(state, catalogVersion, engineVersion) {
  const diff = { cv: catalogVersion };
  if (engineVersion) diff.ev = engineVersion;
  for (const [k, v] of Object.entries(state)) {
    if (String(v) !== String(kDefaults[k])) diff[k] = kNumbers.includes(k) ? String(v) : v;
  }
  return `${kFormat}.${toBase64Url(JSON.stringify(diff))}`;
}

// Answers {state, catalogVersion} or throws with a reason the page shows.
export function decodeShare(hash) {
  const code = hash.replace(/^#/, '');
  const dot = code.indexOf('.');
  if (dot < 0 || !Object.hasOwn(kFormatDefaults, code.slice(0, dot))) {
    throw new Error(`unknown share-link format "${code.slice(0, 8)}"`);
  }
  let raw;
  try {
    raw = JSON.parse(fromBase64Url(code.slice(dot + 1)));
  } catch {
    throw new Error('the share link is damaged (cut short when copied?)');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Error('the share link holds no form state');
  }
  return {
    state: validState(raw, kFormatDefaults[code.slice(0, dot)]),
    catalogVersion: typeof raw.cv === 'string' ? raw.cv : null,
    engineVersion: typeof raw.ev === 'string' ? raw.ev : null,
  };
}

// @ts-check
// After the estimate: what the user measured, as the engine's `measured`
// object; the calibration factors as page state; the record table of measured runs.
import { InputError } from './state.js';

const GiB = 2 ** 30;

// The measurement form's fields (ids are 'm_' + key) and what each becomes.
export const kMeasureFields = ['paste', 'alloc_gib', 'reserved_gib', 'oom', 'tokens_per_s', 'scaling',
  'ttft_ms', 'tpot_ms', 'util_pct', 'mem_pct', 'host_pct', 'label'];

function num(values, key, { min = 0, max = Infinity } = {}) {
  const raw = String(values[key] ?? '').trim();
  if (raw === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max) {
    throw new InputError(key, `must be a number${max < Infinity ? ` from ${min} to ${max}` : ` above ${min}`}, got "${raw}"`);
  }
  return v;
}

// "2: 55000, 4: 90000" (cards: tokens/s) -> [{gpus, tokens_per_s}].
export function parseScaling(text) {
  const points = [];
  for (const part of String(text ?? '').split(/[,;\n]+/).map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)\s*[:=x×]\s*([0-9.eE+]+)$/.exec(part);
    const gpus = m && Number(m[1]);
    const rate = m && Number(m[2]);
    if (!m || !(gpus >= 1) || !Number.isFinite(rate) || rate <= 0) {
      throw new InputError('scaling', `write cards: tokens/s pairs like "1: 30000, 2: 55000", got "${part}"`);
    }
    points.push({ gpus, tokens_per_s: rate });
  }
  return points;
}

// The engine's `measured` from the form's text values (percentages become 0-1 shares).
export function buildMeasured(values, training) {
  const m = {};
  const alloc = num(values, 'alloc_gib', { min: 0.001 });
  const reserved = num(values, 'reserved_gib', { min: 0.001 });
  if (alloc !== undefined) m.peak_allocated_bytes = Math.round(alloc * GiB);
  if (reserved !== undefined) m.peak_reserved_bytes = Math.round(reserved * GiB);
  if (values.oom === true || values.oom === 'true') m.out_of_memory = true;
  if (training) {
    const rate = num(values, 'tokens_per_s', { min: 1e-6 });
    if (rate !== undefined) m.tokens_per_s = rate;
    const scaling = parseScaling(values.scaling);
    if (scaling.length) m.scaling = scaling;
  } else {
    for (const k of ['ttft_ms', 'tpot_ms']) {
      const v = num(values, k, { min: 1e-6 });
      if (v !== undefined) m[k] = v;
    }
  }
  for (const [key, name] of [['util_pct', 'gpu_utilization'], ['mem_pct', 'gpu_memory_share'], ['host_pct', 'host_ram_share']]) {
    const v = num(values, key, { min: 0, max: 100 });
    if (v !== undefined) m[name] = v / 100;
  }
  return m;
}

// The script's last line, "GPUPLAN_MEASUREMENT {json}", as form values. Only a run on the
// setup's own card count measured the setup (memory, rates, latency, monitoring); a training run
// on another count (torchrun with 1, 2, 4...) is one point of the speed-up curve, merged into
// `scaling` (the field's text so far), and nothing else.
export function valuesFromScriptLine(text, setupGpus = 1, scaling = '') {
  const at = String(text ?? '').lastIndexOf('GPUPLAN_MEASUREMENT ');
  if (at < 0) throw new InputError('paste', 'holds no GPUPLAN_MEASUREMENT line (the script prints it last)');
  let parsed;
  try {
    parsed = JSON.parse(text.slice(at + 'GPUPLAN_MEASUREMENT '.length).split('\n')[0]);
  } catch (e) {
    throw new InputError('paste', `the GPUPLAN_MEASUREMENT line is not JSON: ${e.message}`);
  }
  const m = parsed?.measured ?? {};
  const out = {};
  const put = (key, v, scale = 1) => { if (Number.isFinite(v)) out[key] = String(+(v * scale).toPrecision(6)); };
  const gpus = Number.isInteger(m.gpus) && m.gpus > 0 ? m.gpus : 1;
  if (gpus !== setupGpus) {
    if (!Number.isFinite(m.tokens_per_s) || Number.isFinite(m.tpot_ms)) {
      throw new InputError('paste', `this run used ${gpus} GPU(s) and the setup ${setupGpus}: ` +
        'only a run of the same layout compares (serving: one replica of the same size)');
    }
    const points = parseScaling(scaling).filter((p) => p.gpus !== gpus);
    points.push({ gpus, tokens_per_s: +m.tokens_per_s.toPrecision(6) });
    points.sort((a, b) => a.gpus - b.gpus);
    out.scaling = points.map((p) => `${p.gpus}: ${p.tokens_per_s}`).join(', ');
    return out;
  }
  put('alloc_gib', m.peak_allocated_bytes, 1 / GiB);
  put('reserved_gib', m.peak_reserved_bytes, 1 / GiB);
  put('tokens_per_s', m.tokens_per_s);
  put('ttft_ms', m.ttft_ms);
  put('tpot_ms', m.tpot_ms);
  put('util_pct', m.gpu_utilization, 100);
  put('mem_pct', m.gpu_memory_share, 100);
  put('host_pct', m.host_ram_share, 100);
  return out;
}

// One record row per compared quantity of one measured run.
export const kRecordColumns = ['run', 'at', 'label', 'model', 'workload', 'gpu', 'gpus', 'ran_on', 'quantity',
  'estimated', 'measured', 'error_pct', 'within_10pct', 'calibrated', 'compute', 'bandwidth', 'memory',
  'interconnect'];

// What the pasted run ran on, from its GPUPLAN_MEASUREMENT record's `environment` (the GPU's
// name and the library versions), as one line for the record table; '' when it has none.
export function ranOnFromScriptLine(text) {
  const at = String(text ?? '').lastIndexOf('GPUPLAN_MEASUREMENT ');
  if (at < 0) return '';
  try {
    const env = JSON.parse(text.slice(at + 'GPUPLAN_MEASUREMENT '.length).split('\n')[0])?.environment;
    if (!env || typeof env !== 'object') return '';
    return Object.entries(env).filter(([, v]) => typeof v === 'string' && v)
      .map(([k, v]) => (k === 'gpu' ? v : `${k} ${v}`)).join(', ').slice(0, 300);
  } catch {
    return '';
  }
}

export function recordsOf(result, { run, at, label, ranOn = '' }) {
  const req = result.request_normalized;
  const f = result.calibration;
  const model = req.model?.preset ?? (req.model?.hf_config ? 'hf_config' : 'architecture');
  return result.comparisons.map((c) => ({
    run, at, label: label ?? '', model, workload: req.workload?.kind ?? '', gpu: req.gpu?.id ?? req.gpu ?? '',
    gpus: req.parallel?.gpus ?? 1, ran_on: ranOn, quantity: c.quantity, estimated: c.estimated, measured: c.measured,
    error_pct: +(100 * c.error).toFixed(2), within_10pct: c.within_success_line, calibrated: c.calibrated,
    compute: f.compute, bandwidth: f.bandwidth, memory: f.memory, interconnect: f.interconnect,
  }));
}

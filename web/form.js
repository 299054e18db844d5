// @ts-check
// The six-line form: the page state its fields hold (state.js turns it into the request and the
// share link), the fields each purpose shows, and each error marked on the field it names.
import { language, t } from './i18n.js';
import { asciiDigits, calibrationState, kDefaults, kOverlap, kTraining } from './state.js';
import { el, errorLine, errorText, fieldName, setProp, setText } from './render.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
let weightsChosen = false;  // the user picked #weights themselves
const kCalibrationStore = 'gpuplan.calibration';

/** @type {Record<string, any>} The fields' values, by state key. */
export let state = { ...kDefaults };
let shareError = null;   // a bad share link stays reported until the user edits the form
let hooks = null;

// The state a share link gives, and what was wrong with the link (null: nothing).
export function setState(next, problem) {
  state = next;
  shareError = problem;
  // A link's weights other than its purpose's default were someone's choice.
  weightsChosen = (next.weights ?? 'bf16') !== (next.kind === 'qlora' ? 'nf4' : 'bf16');
}

// A weights format a model's source implies (a Hub checkpoint's quantisation, a GGUF file's
// type): set unless the user chose one; `chosen` makes it stick as a user's choice would.
export function suggestWeights(format, chosen = false) {
  const select = /** @type {HTMLSelectElement} */ (document.getElementById('weights'));
  if (!format || (weightsChosen && !chosen) || ![...select.options].some((o) => o.value === format)) return false;
  select.value = format;
  state.weights = format;
  if (chosen) weightsChosen = true;
  return true;
}

// The form field each engine path belongs to, so an error names what the user typed into.
const kFieldOfPath = [
  ['/precision/optimizer_states', 'optimizer_states'], ['/optimizer_kernel', 'optimizer_kernel'],
  ['/memory_techniques/compile', 'compile'],
  ['/memory_techniques/recompute', 'recompute'], ['/memory_techniques/recompute_every', 'recompute_every'],
  ['/parallel/pp_schedule', 'pp_schedule'], ['/parallel/virtual_stages', 'virtual_stages'],
  ...kOverlap.map((k) => [`/parallel/overlap/${k}`, `overlap_${k}`]),
  ['/workload/seq_len', 'seq_len'], ['/workload/tokens', 'tokens'],
  ['/workload/prompt_tokens', 'prompt_tokens'], ['/workload/output_tokens', 'output_tokens'],
  ['/workload/concurrency', 'concurrency'], ['/workload/kind', 'kind'],
  ['/constraints/deadline_s', 'deadline_h'], ['/constraints/max_gpus', 'max_gpus'],
  ['/constraints/budget_usd', 'budget_usd'], ['/constraints/node_power_w', 'node_power_w'],
  ['/constraints/ttft_ms', 'ttft_ms'], ['/constraints/tpot_ms', 'tpot_ms'],
  ['/constraints/cooling', 'cooling'], ['/precision', 'weights'], ['/hf_config', 'hf'],
  ['/model/hf_config', 'hf'], ['/model/hf_id', 'model'], ['/model/preset', 'model'], ['/constraints/wait_s', 'waits'],
  ['/workload/global_batch', 'global_batch'], ['/headroom', 'headroom_pct'],
  ['/memory_techniques/chunked_loss', 'chunked_loss'],
  ['/serving/version', 'srv_version'], ['/serving/gpu_memory_utilization', 'srv_share'],
  ['/serving/mem_fraction_static', 'srv_share'], ['/serving/kv_cache_free_gpu_mem_fraction', 'srv_share'],
  ['/serving/max_num_seqs', 'srv_max_seqs'], ['/serving/max_num_batched_tokens', 'srv_batched'],
  ['/serving/n_ubatch', 'srv_batched'], ['/serving/max_model_len', 'srv_max_model_len'],
  ['/serving/enforce_eager', 'srv_eager'], ['/serving/n_ctx', 'srv_n_ctx'],
  ['/serving/cache_type_k', 'srv_cache_k'], ['/serving/cache_type_v', 'srv_cache_v'],
];

function fieldOf(path) {
  const direct = /^\/(?:model\/)?([a-z_]+)$/.exec(path ?? '');
  if (direct && kDefaults[direct[1]] !== undefined && document.getElementById(direct[1])) return direct[1];
  const hit = kFieldOfPath.find(([p]) => path === p || path?.startsWith(`${p}/`));
  return hit ? hit[1] : null;
}

export function showErrors(list) {
  for (const bad of document.querySelectorAll('#form [aria-invalid="true"]')) {
    bad.removeAttribute('aria-invalid');
    bad.removeAttribute('aria-describedby');
  }
  for (const old of document.querySelectorAll('#form .field-error')) old.remove();
  const all = shareError ? [{ path: 'share link', message: shareError, code: 'share_link' }, ...list] : list;
  $('#errors').replaceChildren(...all.map((e) => {
    const id = fieldOf(e.path);
    const input = id && document.getElementById(id);
    let label = '';
    if (input) {
      const box = input.closest('details');
      if (box) box.open = true;  // the advanced group opens on the field an error names
      input.setAttribute('aria-invalid', 'true');
      label = `${document.querySelector(`label[for="${id}"]`)?.textContent ?? fieldName(id)} — `;
    }
    const hint = id === 'deadline_h' ? ` (${t('deadline_hint')})` : '';
    // The field by its label (else its name, never the JSON pointer) and the problem: in
    // English the engine's reason, in another language the page's words for its code; the
    // contract's line (pointer: reason) is the title.
    const where = label || (e.path ? `${fieldName(e.path)}: ` : '');
    const why = language() === 'en' ? e.message : errorText(e);
    if (input) {
      // Next to the field as well, in the words the summary uses.
      const at = input.closest('.with-unit') ?? input;
      at.after(el('span', { className: 'field-error', id: `error-${id}`, text: `${why}${hint}` }));
      input.setAttribute('aria-describedby', `error-${id}`);
    }
    return el('p', { title: errorLine(e), dataset: { code: e.code ?? '', path: e.path ?? '' } }, `${where}${why}${hint}`);
  }));
}

// A checkbox holds '1' (on) or '' (off) in the page state, as the share link carries it.
export function readForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = /** @type {HTMLInputElement} */ (document.getElementById(k));
    if (!input) continue;
    // A numeric field takes the full-width digits a Chinese IME types (１２８ → 128).
    const numeric = input.inputMode === 'numeric' || input.inputMode === 'decimal';
    state[k] = input.type === 'checkbox' ? (input.checked ? '1' : '') : numeric ? asciiDigits(input.value) : input.value;
  }
}

// A value a select does not offer (from an old or edited share link) falls back to the default,
// and the link's problem is reported rather than sent to the engine as "".
export function writeForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = /** @type {any} */ (document.getElementById(k));
    if (!input) continue;
    if (input.tagName === 'SELECT' && ![...input.options].some((o) => o.value === String(state[k]))) {
      shareError = `${k}: "${state[k]}" is not one of the choices; ${kDefaults[k] || '(any)'} is used`;
      state[k] = kDefaults[k];
    }
    if (input.type === 'checkbox') input.checked = state[k] === '1';
    else input.value = state[k];
  }
  hooks.written();
  showRelevant();
}

// Workload-specific fields appear only for that workload.
export function showRelevant() {
  const training = kTraining.includes(state.kind);
  for (const d of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-for]'))) {
    setProp(d, 'hidden', (d.dataset.for === 'training') !== training);
  }
  setText($('#col-time'), training ? t('col_time') : t('col_throughput'));
  setProp($('#recompute_every_row'), 'hidden', state.recompute !== 'every_n_layers');
  setProp($('#virtual_stages_row'), 'hidden', state.pp_schedule !== 'interleaved');
}

// The defaults the engine applied (request_normalized), shown where the field is empty: the
// global batch in the unit chosen, the headroom in percent. Under the batch, what it is in the
// other unit (the request carries sequences).
export function showDefaults(normalized) {
  const w = normalized?.workload ?? {};
  const tokens = $('#global_batch_unit').value === 'tokens';
  const gb = w.global_batch;
  setProp($('#global_batch'), 'placeholder', gb == null ? t('global_batch_auto')
    : String(tokens && w.seq_len ? gb * w.seq_len : gb));
  setText($('#global_batch_hint'), gb == null || !w.seq_len ? ''
    : tokens ? t('global_batch_in_sequences', gb.toLocaleString('en'))
      : t('global_batch_in_tokens', (gb * w.seq_len).toLocaleString('en')));
  const h = normalized?.headroom;
  setProp($('#headroom_pct'), 'placeholder', Number.isFinite(h) ? String(Math.round(h * 1000) / 10) : '20');
  // The advanced group's "engine default" choices name the value the engine used (a stack's own
  // where one is chosen) while they are the choice: otherwise the answer holds the user's value.
  const p = normalized?.parallel ?? {};
  const named = (id, v, word = v) => {
    setText($(`#${id}`).options[0], v == null || state[id] ? t('engine_default') : t('engine_default_is', word));
  };
  const states = normalized?.precision?.optimizer_states;
  named('optimizer_states', states, states === 'param' ? t('opt_param') : states);
  const kernel = normalized?.optimizer_kernel;
  named('optimizer_kernel', kernel, kernel && t(`ok_${kernel}`));
  const rc = normalized?.memory_techniques?.recompute;
  named('recompute', rc, rc && t(`rc_${rc}`));
  named('pp_schedule', p.pp_schedule, p.pp_schedule === 'interleaved' ? t('pp_interleaved')
    : { '1f1b': '1F1B', gpipe: 'GPipe' }[p.pp_schedule]);
  $('#virtual_stages').placeholder = p.virtual_stages > 1 ? String(p.virtual_stages) : '2';
  for (const k of kOverlap) {
    const v = p.overlap?.[k];
    named(`overlap_${k}`, typeof v === 'boolean' ? v : null, t(v ? 'ov_on' : 'ov_off'));
  }
}

// Switching the batch's unit keeps its meaning: the number typed is converted with the
// sequence length (tokens to sequences rounded to whole sequences, as the request is).
function convertBatch() {
  const unit = $('#global_batch_unit').value;
  const input = $('#global_batch');
  const v = Number(input.value.trim());
  const seqLen = Number($('#seq_len').value.trim());
  if (!input.value.trim() || !Number.isFinite(v) || !(seqLen > 0)) return;
  input.value = String(unit === 'tokens' ? v * seqLen : Math.max(1, Math.round(v / seqLen)));
}

// Calibration factors are page state: in the share link, and kept in this browser so a later
// visit without a link plans with them too (the banner and the row marks say so).
export function setCalibration(factors) {
  Object.assign(state, calibrationState(factors));
  try {
    if (factors) localStorage.setItem(kCalibrationStore, JSON.stringify(factors));
    else localStorage.removeItem(kCalibrationStore);
  } catch { /* storage refused: the share link still carries them */ }
  hooks.schedule();
}

export function storedCalibration() {
  try {
    const f = JSON.parse(localStorage.getItem(kCalibrationStore) ?? 'null');
    return f && typeof f === 'object' ? calibrationState(f) : {};
  } catch {
    return {};
  }
}

// written() runs once writeForm has filled the fields: the fleet panel reads its text then.
export function initForm(formHooks) {
  hooks = formHooks;
  const edited = () => {
    shareError = null;
    hooks.schedule();
  };
  $('#form').addEventListener('input', edited);
  $('#form').addEventListener('change', edited);
  $('#form').addEventListener('submit', (e) => e.preventDefault());
  // Before the form's own listeners (on an ancestor) read the fields: a select fires input first.
  $('#global_batch_unit').addEventListener('input', convertBatch);
  $('#kind').addEventListener('change', () => {
    // A training stack cannot serve, nor an engine train: the choice goes back to generic.
    const chosen = $('#framework').selectedOptions[0];
    if (chosen?.dataset.for && (chosen.dataset.for === 'training') !== kTraining.includes($('#kind').value)) {
      $('#framework').value = '';
    }
    // Each purpose restores its own precision unless the user chose one:
    // QLoRA needs a 4-bit base, the others start from bf16.
    const kind = $('#kind').value;
    const fourBit = ['nf4', 'int4', 'gptq_int4', 'awq_int4'].includes($('#weights').value);
    const wanted = kind === 'qlora' ? (fourBit && weightsChosen ? null : 'nf4')
      : (weightsChosen ? null : 'bf16');
    if (wanted && $('#weights').value !== wanted) {
      $('#weights').value = wanted;
      hooks.schedule();
    }
  });
  // A weights format the user picks stays through purpose changes (QLoRA still forces 4 bits).
  // (the page sets .value without events, so a change event is the user's).
  $('#weights').addEventListener('change', () => { weightsChosen = true; });
}

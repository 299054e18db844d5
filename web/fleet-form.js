// @ts-check
// The team-fleet form: a row per workload, written into gpuplan fleet's request
// (the #fleet JSON text, which the share link carries). What the form does not show (prices,
// ownership, a workload's other plan fields) stays in the JSON untouched; values the form cannot
// read as numbers go to the engine as typed, so its error names the field.
import { el } from './render.js';
import { t } from './i18n.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
const kJobs = ['lora', 'qlora', 'full_finetune', 'pretrain', 'offline', 'online'];
const jobLabel = (j) => t(j === 'offline' || j === 'online' ? `fleet_job_${j}` : `kind_${j}`);

let doc = null;        // the parsed fleet request the form edits
/** @type {(text: string) => void} */
let onEdit = () => {};

function jobOf(w) {
  const wl = w.request?.workload ?? {};
  if (wl.kind !== 'inference') return wl.kind;
  return wl.mode === 'offline' ? 'offline' : 'online';
}

// '' removes the field (the engine's default applies); a number is a number; anything else is
// sent as typed so the engine names it.
function setField(obj, key, text) {
  const s = String(text).trim();
  if (s === '') delete obj[key];
  else obj[key] = Number.isFinite(Number(s)) ? Number(s) : s;
}

const hoursText = (v) => (Array.isArray(v) ? v.join(' ') : v ?? '');
function setHours(w, text) {
  const parts = String(text).split(/[\s,;]+/).filter(Boolean);
  if (!parts.length) delete w.concurrency_by_hour;
  else w.concurrency_by_hour = parts.map((p) => (Number.isFinite(Number(p)) ? Number(p) : p));
}

// Switching a workload's job keeps its model and drops what the new job does not take.
function setJob(w, job) {
  w.request ??= {};
  const wl = (w.request.workload ??= {});
  const inference = job === 'offline' || job === 'online';
  wl.kind = inference ? 'inference' : job;
  if (inference) {
    for (const k of ['seq_len', 'tokens']) delete wl[k];
    if (job === 'offline') wl.mode = 'offline'; else delete wl.mode;
  } else {
    for (const k of ['mode', 'prompt_tokens', 'output_tokens', 'concurrency']) delete wl[k];
  }
  if (job !== 'offline') delete w.requests_per_run;
  if (job === 'online') delete w.every_days; else delete w.concurrency_by_hour;
  if (w.request.constraints && !inference) for (const k of ['ttft_ms', 'tpot_ms']) delete w.request.constraints[k];
}

function commit() {
  const text = JSON.stringify(doc, null, 1);
  $('#fleet').value = text;
  onEdit(text);
}

// One input bound to a field: path names it for the engine's errors (data-path).
function input(path, label, value, write, attrs = {}) {
  const i = el('input', { 'aria-label': label, dataset: { path }, ...attrs });
  i.value = value ?? '';
  i.addEventListener('change', () => { write(i.value); commit(); });
  return i;
}

function row(w, i) {
  const base = `/workloads/${i}`;
  // Created when missing, so an edit lands in the request (the engine then names what is short).
  w.request ??= {};
  const wl = (w.request.workload ??= {});
  const job = jobOf(w);
  const n = `${t('fleet_col_name')} ${i + 1}`;
  const cell = (...c) => el('td', {}, ...c);
  const jobSelect = el('select', { 'aria-label': `${t('fleet_col_job')} ${i + 1}`, dataset: { path: `${base}/request/workload` } },
    ...kJobs.map((j) => el('option', { value: j, text: jobLabel(j) })));
  if (!kJobs.includes(job)) jobSelect.prepend(el('option', { value: job ?? '', text: String(job ?? '?') }));
  jobSelect.value = job ?? '';
  jobSelect.addEventListener('change', () => { setJob(w, jobSelect.value); commit(); draw(); });
  const model = w.request?.model;
  const modelCell = model && typeof model === 'object' && Object.keys(model).length === 1 && 'preset' in model
    ? input(`${base}/request/model`, `${t('fleet_col_model')} ${i + 1}`, model.preset,
      (v) => { w.request.model = { preset: v.trim() }; }, { list: 'model-list', spellcheck: 'false' })
    : el('span', { className: 'hint', text: t('fleet_model_json') });
  const training = job !== 'offline' && job !== 'online';
  const remove = el('button', { type: 'button', 'aria-label': `${t('fleet_remove')} ${i + 1}`, text: '×' });
  remove.addEventListener('click', () => { doc.workloads.splice(i, 1); commit(); draw(); });
  return el('tr', {},
    cell(input(`${base}/name`, n, w.name, (v) => { w.name = v; })),
    cell(modelCell),
    cell(jobSelect),
    cell(job === 'online' ? '—' : input(`${base}/every_days`, `${t('fleet_col_every')} ${i + 1}`, w.every_days,
      (v) => setField(w, 'every_days', v), { inputmode: 'decimal', placeholder: '1' })),
    cell(...(training ? [input(`${base}/request/workload/tokens`, `${t('fleet_tokens')} ${i + 1}`, wl.tokens,
      (v) => setField(wl, 'tokens', v), { inputmode: 'decimal' }), el('span', { className: 'hint', text: t('fleet_tokens') })]
      : job === 'offline' ? [input(`${base}/requests_per_run`, `${t('fleet_requests')} ${i + 1}`, w.requests_per_run,
        (v) => setField(w, 'requests_per_run', v), { inputmode: 'decimal' }),
      el('span', { className: 'hint', text: t('fleet_requests') })] : ['—'])),
    cell(...(training
      ? [input(`${base}/request/workload/seq_len`, `seq_len ${i + 1}`, wl.seq_len, (v) => setField(wl, 'seq_len', v),
        { inputmode: 'numeric', placeholder: 'seq_len' })]
      : [input(`${base}/request/workload/prompt_tokens`, `${t('fleet_prompt')} ${i + 1}`, wl.prompt_tokens,
        (v) => setField(wl, 'prompt_tokens', v), { inputmode: 'numeric', placeholder: '1024' }), ' / ',
      input(`${base}/request/workload/output_tokens`, `${t('fleet_output')} ${i + 1}`, wl.output_tokens,
        (v) => setField(wl, 'output_tokens', v), { inputmode: 'numeric', placeholder: '256' })])),
    cell(job === 'online' ? input(`${base}/concurrency_by_hour`, `${t('fleet_col_hours')} ${i + 1}`,
      hoursText(w.concurrency_by_hour), (v) => setHours(w, v), { placeholder: t('fleet_hours_hint'), spellcheck: 'false' })
      : '—'),
    cell(remove));
}

const constraints = () => (doc.constraints ??= {});
function drawPool() {
  const c = doc?.constraints ?? {};
  const bind = (id, value, write) => {
    const i = $(id);
    i.value = value ?? '';
    i.onchange = () => { write(i.value); commit(); };
  };
  bind('#fleet-gpus', Array.isArray(c.gpus) ? c.gpus.join(', ') : c.gpus, (v) => {
    const ids = v.split(/[\s,;]+/).filter(Boolean);
    if (ids.length) constraints().gpus = ids; else delete constraints().gpus;
  });
  bind('#fleet-max', c.max_gpus, (v) => setField(constraints(), 'max_gpus', v));
  bind('#fleet-growth', doc?.growth, (v) => setField(doc, 'growth', v));
  bind('#fleet-currency', doc?.currency?.code, (v) => {
    if (v.trim()) (doc.currency ??= {}).code = v.trim(); else if (doc.currency) delete doc.currency.code;
  });
  bind('#fleet-per-usd', doc?.currency?.per_usd, (v) => setField((doc.currency ??= {}), 'per_usd', v));
}

function draw() {
  const rows = Array.isArray(doc?.workloads) ? doc.workloads : [];
  $('#fleet-rows tbody').replaceChildren(...rows.map((w, i) => (w && typeof w === 'object' ? row(w, i)
    : el('tr', {}, el('td', { colspan: '8', className: 'hint', text: t('fleet_model_json') })))));
  for (const f of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('#fleet-form input, #fleet-form select'))) f.disabled = doc === null;
  drawPool();
}

// Reads the JSON text into the form; text that is not a fleet request opens the JSON editor
// and says why instead.
export function syncFleetForm() {
  const text = $('#fleet').value.trim();
  let problem = '';
  try {
    doc = text ? JSON.parse(text) : {};
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(t('fleet_not_object'));
  } catch (err) {
    doc = null;
    problem = `${t('fleet_bad_json')}: ${err.message}`;
  }
  $('#fleet-form-error').textContent = problem;
  if (problem) $('#fleet-json').open = true;
  draw();
}

// Marks the inputs an engine error points into; true when one was found.
export function markFleetErrors(errors) {
  for (const i of document.querySelectorAll('#fleet-form [aria-invalid]')) i.removeAttribute('aria-invalid');
  let found = false;
  for (const e of errors) {
    for (const i of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('#fleet-form [data-path]'))) {
      if (e.path === i.dataset.path || e.path?.startsWith(`${i.dataset.path}/`)) {
        i.setAttribute('aria-invalid', 'true');
        found = true;
      }
    }
  }
  return found;
}

// add() gives the plan request to add as a workload (the form's six lines), or throws.
export function initFleetForm({ add, onChange }) {
  onEdit = onChange;
  // On input, not change: a change fires as the user clicks "Plan", and redrawing the rows then
  // would move the button from under the pointer.
  $('#fleet').addEventListener('input', syncFleetForm);
  $('#fleet-add').addEventListener('click', () => {
    if (doc === null) return;
    let request;
    try {
      request = add();
    } catch (err) {
      $('#fleet-form-error').textContent = err.message;
      return;
    }
    const w = { name: `${t('fleet_col_name')} ${(doc.workloads?.length ?? 0) + 1}`, request };
    if (request.workload?.kind !== 'inference') w.every_days = 7;
    (doc.workloads ??= []).push(w);
    commit();
    draw();
  });
  syncFleetForm();
}

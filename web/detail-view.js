// @ts-check
// The detail view of one recommendation (render.js draws it): what is asked about the setup on
// show (its measurement script, limits, launch command) and the panel that measures it.
import { loadDetailWords } from './i18n.js';
import { el, errorLine, renderDetail } from './render.js';
import { kTraining } from './state.js';
import { MeasurePanel, renderDiagnosis } from './calibration-view.js';
import { ask, onAnswer, rounds } from './engine-client.js';
import { setCalibration } from './form.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
let opener = null;
let measure = null;
let shown = null;  // the recommendation on show

const setup = rounds({
  // The plan carries each row's figures; the working behind them (explain, levers, diagnosis,
  // the engine's pool) is the row's own estimate, asked for when its detail opens.
  estimate: (data) => showFull(data.text),
  launch: (data) => import('./launch-view.js').then((m) => m.renderLaunch($('#launch-box'), data.text)),
  limits: (data) => import('./limits-view.js').then((m) => m.renderLimits($('#limits-list'), data.text,
    $('#limits-run').dataset.count)),
});

// The fixed setup a recommendation stands for: the plan's request plus the card and the
// layout, batch and techniques the planner chose (what `gpuplan estimate` and `script` take).
function setupRequest(rec, planText) {
  const request = JSON.parse(planText);
  delete request.constraints;
  request.gpu = rec.gpu;
  request.parallel = rec.parallel;
  request.precision = { ...request.precision, ...rec.precision };
  request.memory_techniques = { ...request.memory_techniques, ...rec.memory_techniques };
  if (rec.serving) request.serving = { ...request.serving, ...rec.serving };
  if (kTraining.includes(request.workload.kind)) {
    Object.assign(request.workload, { micro_batch: rec.micro_batch, grad_accum: rec.grad_accum });
  } else if (rec.concurrency_per_replica) {
    request.workload.concurrency = rec.concurrency_per_replica;
  }
  return request;
}

// planText: the request of the plan rec comes from.
async function showFull(text) {
  // The words arrive once; an answer for a setup closed or replaced meanwhile is not drawn.
  const asked = shown;
  await loadDetailWords();
  if (shown !== asked) return;
  const envelope = JSON.parse(text);
  const detail = $('#detail');
  if (!shown || !envelope.ok) {
    detail.dataset.full = 'error';
    return;
  }
  renderDetail(detail, { ...shown, estimate: envelope.result });
  renderDiagnosis($('#diagnosis'), envelope.result.diagnosis);
  detail.dataset.full = 'true';
}

// The card and count on show, for a re-plan to follow (null when the detail is closed).
export function detailShown() {
  return shown && !$('#detail').hidden ? { gpu: shown.gpu, count: shown.count } : null;
}

// After a re-plan: the setup on show is no longer among the recommendations. The detail stays
// open with what it showed, marked as gone, until the user closes it.
export function markDetailGone() {
  const detail = $('#detail');
  detail.dataset.gone = 'true';
  $('#detail-gone').hidden = false;
  shown = null;
  setup.next();
}

// focus false: a re-plan refreshes the detail on show without taking focus from the field the
// user is typing in.
export function openDetail(rec, button, planText, { focus = true } = {}) {
  loadDetailWords();
  opener = button;
  shown = rec;
  const detail = $('#detail');
  detail.dataset.full = 'false';
  detail.dataset.gone = 'false';
  $('#detail-gone').hidden = true;
  renderDetail(detail, rec);
  renderDiagnosis($('#diagnosis'), rec.estimate.diagnosis);
  measure.open(setupRequest(rec, planText));
  $('#download-script').dataset.request = JSON.stringify(setupRequest(rec, planText), null, 2);
  // The reverse questions keep the latency targets a setup request drops.
  const limits = setupRequest(rec, planText);
  const targets = JSON.parse(planText).constraints ?? {};
  limits.constraints = Object.fromEntries(['ttft_ms', 'tpot_ms'].filter((k) => k in targets)
    .map((k) => [k, targets[k]]));
  $('#limits-run').dataset.request = JSON.stringify(limits);
  $('#limits-run').dataset.count = String(rec.parallel.gpus);
  $('#limits-list').replaceChildren();
  // The launch command sizes its batch within the same targets.
  $('#launch-run').dataset.request = JSON.stringify(limits);
  $('#launch-box').replaceChildren();
  setup.next();  // answers for the setup shown before are dropped
  setup.ask('estimate', JSON.stringify(setupRequest(rec, planText)));
  $('#script-errors').textContent = '';
  if (focus) $('#detail').focus();
}

export function closeDetail() {
  shown = null;
  setup.next();  // a full estimate still on its way is not drawn
  const detail = $('#detail');
  const hadFocus = detail.contains(document.activeElement) || document.activeElement === document.body;
  detail.hidden = true;
  if (hadFocus) (opener?.isConnected ? opener : $('#results-section')).focus();
}

function downloadScript({ text }) {
  const envelope = JSON.parse(text);
  if (!envelope.ok) {
    $('#script-errors').textContent = envelope.errors.map(errorLine).join('\n');
    return;
  }
  const url = URL.createObjectURL(new Blob([envelope.result.script], { type: 'text/x-python' }));
  const a = el('a', { href: url, download: envelope.result.filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function initDetail() {
  measure = new MeasurePanel({ onApply: setCalibration, onClear: () => setCalibration(null) });
  onAnswer('script', downloadScript);
  $('#detail-close').addEventListener('click', closeDetail);
  // Escape closes the detail and gives focus back to the row's button.
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !$('#detail').hidden) {
      e.preventDefault();
      closeDetail();
    }
  });
  $('#launch-run').addEventListener('click', (e) => {
    $('#launch-box').replaceChildren();
    setup.ask('launch', e.currentTarget.dataset.request);
  });
  $('#limits-run').addEventListener('click', (e) => {
    $('#limits-list').replaceChildren();
    setup.ask('limits', e.currentTarget.dataset.request);
  });
  $('#download-script').addEventListener('click', (e) => {
    ask({ type: 'script', request: e.currentTarget.dataset.request });
  });
}

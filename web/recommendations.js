// @ts-check
// The plan's answer on the page: the status line, the recommendation table as the user sorts
// it, the advice, wait-or-switch and rejected lists, and the traffic table that follows each plan.
import { t } from './i18n.js';
import { kTraining, trafficRequest } from './state.js';
import { el, morphChildren, noteText, rejectionText, renderList, renderTable, renderWait, setText, sortRows, summarize } from './render.js';
import { showDefaults, showErrors, state } from './form.js';
import { detailShown, markDetailGone, openDetail } from './detail-view.js';
import { rounds } from './engine-client.js';
import { catalogGpus } from './catalog-loader.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
export let lastRequest = null;  // the plan request last sent (what #request-json shows once drawn)
let rows = [];
let result = null;
let lastDraw = null;
let sort = { key: null, dir: 1 };
// The table draws the first kShown rows (a plan over the whole catalog has about a hundred, and
// drawing them all is most of a re-plan's time on a slow machine); "Show all" draws the rest.
// Exports, the sheet and sorting always work on every row.
const kShown = 25;
let showAll = false;

// Only the answer for the newest plan is drawn.
const traffic = rounds({
  traffic: (data) => import('./traffic-view.js').then((m) => m.renderTraffic($('#traffic-section'), data.text)),
});

let busyTimer = 0;

export function setStatus(status, text) {
  clearTimeout(busyTimer);
  document.body.dataset.status = status;
  setText($('#status'), text);
}

// body[data-status] says busy at once; the words follow only when a plan takes long enough to
// be seen waiting. A re-plan is drawn within a frame or two, and new words in the status line
// would lay the page out again while the engine works, delaying the answer's drawing.
export function planSent(text) {
  lastRequest = text;
  clearTimeout(busyTimer);
  document.body.dataset.status = 'busy';
  busyTimer = setTimeout(() => { $('#status').textContent = t('busy'); }, 150);
}

// An input the engine or the form refuses keeps the last good plan on screen, marked stale,
// rather than wiping it; the next good plan clears the mark.
export function markStale() {
  document.body.dataset.stale = rows.length ? 'true' : 'false';
  $('#stale-note').hidden = !rows.length;
}

function clearStale() {
  document.body.dataset.stale = 'false';
  $('#stale-note').hidden = true;
}


export function drawPlan(envelope, ms) {
  setText($('#request-json'), lastRequest);
  // An open detail follows its card and count through the re-plan.
  const open = detailShown();
  if (!envelope.ok) {
    markStale();
    showErrors(envelope.errors);
    setStatus('error', '');
    return;
  }
  showErrors([]);
  clearStale();
  result = envelope.result;
  lastDraw = { envelope, ms };
  // The lean plan gives each band's basis and the headroom once; every row's figures carry
  // them as a full estimate does, so the table, sheet and exports read one shape.
  for (const rec of result.recommendations) {
    const e = rec.estimate;
    for (const [ptr, band] of Object.entries(e.bands ?? {})) band.basis ??= result.band_basis?.[ptr] ?? '';
    e.memory.headroom ??= result.request_normalized?.headroom;
    e.warnings ??= [];
  }
  rows = result.recommendations.map((rec) => ({ rec, summary: summarize(rec) }));
  drawRows();
  if (open) followDetail(open);
  renderList($('#advice'), result.advice, (a) => noteText(a));
  renderWait($('#wait-section'), result.wait_or_switch, (id) => catalogGpus.get(id)?.name ?? id);
  renderRejected(result.rejected ?? []);
  showDefaults(result.request_normalized);
  const warnings = result.warnings.map((w) => noteText(w));
  setStatus('ready', `${t('ready')} ${ms.toFixed(0)} ms · ${result.setups_evaluated} ${t('setups')}` +
    (rows.length ? '' : ` · ${t('no_rows')}`) + (warnings.length ? ` · ${warnings.join(' · ')}` : ''));
  document.body.dataset.planMs = ms.toFixed(1);
  // Navigation start to the first recommendation drawn: the budget script reads it.
  document.body.dataset.firstPlanAt ??= performance.now().toFixed(0);
}

// In another language.
export function redrawPlan() {
  if (lastDraw) drawPlan(lastDraw.envelope, lastDraw.ms);
}

// With a request rate on an inference form, the traffic table follows every plan.
export function requestTraffic() {
  const section = $('#traffic-section');
  let request = null;
  try {
    request = lastRequest && trafficRequest(state, JSON.parse(lastRequest));
  } catch (err) {
    section.hidden = false;
    $('#traffic-errors').textContent = err.message;
    return;
  }
  if (!request) {
    section.hidden = true;
    return;
  }
  section.dataset.request = JSON.stringify(request);
  traffic.next();
  traffic.ask('traffic', section.dataset.request);
}

function renderRejected(list) {
  const ul = $('#rejected');
  morphChildren(ul, el('ul', {}, ...list.map((r) => el('li', { title: r.reason ?? r.message ?? '', dataset: { code: r.code ?? '' } },
    rejectionText(r)))));
  ul.parentElement.hidden = list.length === 0;
}

// The rows as the user sorted the table (what the exports show).
export function sortedRows() {
  return sortRows(rows, sort.key, sort.dir);
}

// The rows in the engine's order for the chosen objective: rankedRows()[0] is the first option,
// whatever column the table is sorted by (the procurement sheet names it).
export function rankedRows() {
  return rows;
}

// The row of the same card and count (else the same card) takes the open detail over; with
// neither, the detail says its setup is gone.
// A drawn row's Details button (null when the row is not drawn).
/** @type {(gpu: string) => HTMLButtonElement | null} */
const detailButton = (gpu) => document.querySelector(`#results tbody tr[data-gpu="${CSS.escape(gpu)}"] button.detail`);

function followDetail(open) {
  const row = rows.find((r) => r.rec.gpu === open.gpu && r.rec.count === open.count) ??
    rows.find((r) => r.rec.gpu === open.gpu);
  if (!row) {
    markDetailGone();
    return;
  }
  if (!detailButton(row.rec.gpu)) {  // beyond the rows drawn: draw them all, so the detail keeps its row
    showAll = true;
    drawRows();
  }
  openDetail(row.rec, detailButton(row.rec.gpu), lastRequest, { focus: false });
}

function drawRows() {
  const training = kTraining.includes(result?.request_normalized?.workload?.kind ?? state.kind);
  // Keyboard focus on a row's Details button stays on that card's button through a redraw.
  const focused = /** @type {HTMLElement | null | undefined} */ (document.activeElement?.closest?.('#results tbody tr'))?.dataset.gpu;
  const all = sortedRows();
  // The planner's first option stays in view whatever column the table is sorted by.
  const shown = showAll ? all : all.filter((r, i) => i < kShown || r === rows[0]);
  renderTable($('#results tbody'), shown, training, (rec, button) => openDetail(rec, button, lastRequest),
    rows[0]?.rec);
  if (focused) detailButton(focused)?.focus();
  const more = $('#show-all');
  more.hidden = shown.length === all.length;
  more.textContent = t('show_all', all.length);
}

// Back to the planner's order: a new "Rank by" is read in the engine's ranking, not under a
// header sort chosen for the old one.
function resetSort() {
  sort = { key: null, dir: 1 };
  for (const th of document.querySelectorAll('th')) th.removeAttribute('aria-sort');
}

export function initTable() {
  $('#show-all').addEventListener('click', () => {
    showAll = true;
    drawRows();
  });
  $('#objective').addEventListener('change', () => {
    resetSort();
    drawRows();
  });
  for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll('th button[data-sort]'))) {
    button.addEventListener('click', () => {
      const key = button.dataset.sort;
      // Throughput reads best highest-first; everything else lowest-first.
      const first = key === 'time' && !kTraining.includes(state.kind) ? -1 : 1;
      sort = { key, dir: sort.key === key ? -sort.dir : first };
      for (const th of document.querySelectorAll('th')) th.removeAttribute('aria-sort');
      button.parentElement.setAttribute('aria-sort', sort.dir > 0 ? 'ascending' : 'descending');
      drawRows();
    });
  }
}

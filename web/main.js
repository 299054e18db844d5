// Wires the six-line form to the engine worker: every input change re-plans (only the newest
// answer is drawn), the URL hash always holds the share link, and render.js draws the results.
import { preferredLanguage, setLanguage, t } from './i18n.js';
import { buildRequest, calibrationOf, calibrationState, decodeShare, encodeShare, InputError, kDefaults,
  kTraining, trafficRequest } from './state.js';
import { el, errorLine, exportPlan, renderDetail, renderList, renderTable, renderWait, sortRows, summarize } from './render.js';
import { MeasurePanel, renderDiagnosis, showBanner } from './calibration-view.js';

const $ = (sel) => document.querySelector(sel);
const params = new URLSearchParams(location.search);
const embed = params.get('embed') === '1';
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });

let state = { ...kDefaults };
let catalogVersion = '';
let engineVersion = '';
const customParts = {};  // part ('gpus' | 'models') -> the file or URL it came from
let sharedVersion = null;
let sharedEngine = null;
let shareError = null;   // a bad share link stays reported until the user edits the form
let seq = 0;             // drawn results so far (body[data-plan-seq])
let gen = 0;             // form states so far; only the newest one's plan is drawn
let inFlight = false;
let pending = null;
let rows = [];
let result = null;
let lastDraw = null;
let sort = { key: null, dir: 1 };
let lastRequest = null;
let trafficSeq = 0;       // traffic requests sent; only the newest answer is drawn
let detailSeq = 0;        // setups shown in the detail view; limits and launch answer the newest
let detailOpener = null;
let modelNames = new Map();
let catalogGpus = new Map();
let measure = null;
const kCalibrationStore = 'gpuplan.calibration';
let fleet = null;         // fleet-view.js once loaded
let fleetLoading = null;

function loadFleet() {
  fleetLoading ??= import('./fleet-view.js').then((m) => {
    m.initFleet(worker, {
      model: () => state.model,
      add() {
        readForm();
        const request = buildRequest(state);
        delete request.constraints.wait_s;  // a queue is the plan's question, not the fleet's
        return request;
      },
      onChange: () => schedule(),
    });
    fleet = m;
  }).catch((err) => {
    fleetLoading = null;  // the next look at the panel tries again
    $('#fleet-errors').textContent = `fleet-view.js: ${err.message}`;
  });
  return fleetLoading;
}

// The form field each engine path belongs to, so an error names what the user typed into.
const kFieldOfPath = [
  ['/workload/seq_len', 'seq_len'], ['/workload/tokens', 'tokens'],
  ['/workload/prompt_tokens', 'prompt_tokens'], ['/workload/output_tokens', 'output_tokens'],
  ['/workload/concurrency', 'concurrency'], ['/workload/kind', 'kind'],
  ['/constraints/deadline_s', 'deadline_h'], ['/constraints/max_gpus', 'max_gpus'],
  ['/constraints/budget_usd', 'budget_usd'], ['/constraints/node_power_w', 'node_power_w'],
  ['/constraints/ttft_ms', 'ttft_ms'], ['/constraints/tpot_ms', 'tpot_ms'],
  ['/constraints/cooling', 'cooling'], ['/precision', 'weights'], ['/hf_config', 'hf'],
  ['/model/hf_config', 'hf'], ['/model/preset', 'model'], ['/constraints/wait_s', 'waits'],
];

function fieldOf(path) {
  const direct = /^\/(?:model\/)?([a-z_]+)$/.exec(path ?? '');
  if (direct && kDefaults[direct[1]] !== undefined && document.getElementById(direct[1])) return direct[1];
  const hit = kFieldOfPath.find(([p]) => path === p || path?.startsWith(`${p}/`));
  return hit ? hit[1] : null;
}

function setStatus(status, text) {
  document.body.dataset.status = status;
  $('#status').textContent = text;
}

function showErrors(list) {
  for (const bad of document.querySelectorAll('#form [aria-invalid="true"]')) bad.removeAttribute('aria-invalid');
  const all = shareError ? [{ path: 'share link', message: shareError }, ...list] : list;
  $('#errors').replaceChildren(...all.map((e) => {
    const id = fieldOf(e.path);
    const input = id && document.getElementById(id);
    let label = '';
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', 'errors');
      label = `${document.querySelector(`label[for="${id}"]`)?.textContent ?? id} — `;
    }
    const hint = id === 'deadline_h' ? ` (${t('deadline_hint')})` : '';
    return el('p', { text: `${label}${errorLine(e)}${hint}` });
  }));
}

function clearResults() {
  rows = [];
  result = null;
  lastDraw = null;
  renderTable($('#results tbody'), [], true, () => {});
  renderList($('#advice'), [], String);
  renderList($('#rejected'), [], String);
  renderWait($('#wait-section'), undefined);
  closeDetail();
}

function readForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = document.getElementById(k);
    if (input) state[k] = input.value;
  }
}

// A value a select does not offer (from an old or edited share link) falls back to the default,
// and the link's problem is reported rather than sent to the engine as "".
function writeForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = document.getElementById(k);
    if (!input) continue;
    if (input.tagName === 'SELECT' && ![...input.options].some((o) => o.value === String(state[k]))) {
      shareError = `${k}: "${state[k]}" is not one of the choices; ${kDefaults[k] || '(any)'} is used`;
      state[k] = kDefaults[k];
    }
    input.value = state[k];
  }
  if (fleet) fleet.syncFleetForm(); else if (state.fleet) loadFleet();
  showRelevant();
}

// Workload-specific fields appear only for that workload.
function showRelevant() {
  const training = kTraining.includes(state.kind);
  for (const d of document.querySelectorAll('[data-for]')) {
    d.hidden = (d.dataset.for === 'training') !== training;
  }
  $('#col-time').textContent = training ? t('col_time') : t('col_throughput');
}

function schedule() {
  readForm();
  showRelevant();
  const preset = !state.hf.trim() && !state.layers.trim();
  $('#model-name').textContent = preset ? (modelNames.get(state.model) ?? '') : '';
  history.replaceState(null, '', `${location.pathname}${location.search}#${encodeShare(state, catalogVersion, engineVersion)}`);
  gen += 1;
  let request;
  try {
    showBanner(calibrationOf(state));
    request = buildRequest(state);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    pending = null;  // and a plan still running for an older state will not be drawn
    clearResults();
    $('#request-json').textContent = '';
    showErrors([{ path: `/${err.field}`, message: err.message.slice(err.field.length + 2) }]);
    setStatus('error', '');
    document.body.dataset.planSeq = String(++seq);
    postHeight();
    return;
  }
  pending = { gen, text: JSON.stringify(request, null, 2) };
  pump();
}

function pump() {
  if (inFlight || pending === null || !catalogVersion) return;
  inFlight = true;
  lastRequest = pending.text;
  setStatus('busy', t('busy'));
  worker.postMessage({ type: 'plan', seq: pending.gen, request: pending.text });
  pending = null;
}

function drawPlan(envelope, ms) {
  $('#request-json').textContent = lastRequest;
  closeDetail();
  if (!envelope.ok) {
    clearResults();
    showErrors(envelope.errors);
    setStatus('error', '');
    return;
  }
  showErrors([]);
  result = envelope.result;
  lastDraw = { envelope, ms };
  rows = result.recommendations.map((rec) => ({ rec, summary: summarize(rec) }));
  drawRows();
  renderList($('#advice'), result.advice, (a) => a.message);
  renderWait($('#wait-section'), result.wait_or_switch);
  renderList($('#rejected'), result.rejected, (r) => `${r.gpu}: ${r.reason ?? r.message ?? ''}`);
  const warnings = result.warnings.map((w) => w.message);
  setStatus('ready', `${t('ready')} ${ms.toFixed(0)} ms · ${result.setups_evaluated} ${t('setups')}` +
    (rows.length ? '' : ` · ${t('no_rows')}`) + (warnings.length ? ` · ${warnings.join(' · ')}` : ''));
  document.body.dataset.planMs = ms.toFixed(1);
  // Navigation start to the first recommendation drawn: the budget script reads it.
  document.body.dataset.firstPlanAt ??= performance.now().toFixed(0);
}

// With a request rate on an inference form, the traffic table follows every plan.
function requestTraffic() {
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
  worker.postMessage({ type: 'traffic', request: section.dataset.request, seq: ++trafficSeq });
}

function sortedRows() {
  return sortRows(rows, sort.key, sort.dir);
}

function drawRows() {
  const training = kTraining.includes(result?.request_normalized?.workload?.kind ?? state.kind);
  renderTable($('#results tbody'), sortedRows(), training, (rec, button) => {
    detailOpener = button;
    renderDetail($('#detail'), rec);
    renderDiagnosis($('#diagnosis'), rec.estimate.diagnosis);
    measure.open(setupRequest(rec));
    $('#download-script').dataset.request = JSON.stringify(setupRequest(rec), null, 2);
    // The reverse questions keep the latency targets a setup request drops.
    const limits = setupRequest(rec);
    const targets = JSON.parse(lastRequest).constraints ?? {};
    limits.constraints = Object.fromEntries(['ttft_ms', 'tpot_ms'].filter((k) => k in targets)
      .map((k) => [k, targets[k]]));
    $('#limits-run').dataset.request = JSON.stringify(limits);
    $('#limits-run').dataset.count = String(rec.parallel.gpus);
    $('#limits-list').replaceChildren();
    // The launch command sizes its batch within the same targets.
    $('#launch-run').dataset.request = JSON.stringify(limits);
    $('#launch-box').replaceChildren();
    ++detailSeq;  // answers for the setup shown before are dropped
    $('#script-errors').textContent = '';
    $('#detail').focus();
  });
}

// The fixed setup a recommendation stands for: the plan's request plus the card and the
// layout, batch and techniques the planner chose (what `gpuplan estimate` and `script` take).
function setupRequest(rec) {
  const request = JSON.parse(lastRequest);
  delete request.constraints;
  request.gpu = rec.gpu;
  request.parallel = rec.parallel;
  request.precision = { ...request.precision, ...rec.precision };
  request.memory_techniques = { ...request.memory_techniques, ...rec.memory_techniques };
  if (kTraining.includes(request.workload.kind)) {
    Object.assign(request.workload, { micro_batch: rec.micro_batch, grad_accum: rec.grad_accum });
  } else if (rec.concurrency_per_replica) {
    request.workload.concurrency = rec.concurrency_per_replica;
  }
  return request;
}

function downloadScript(text) {
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

function closeDetail() {
  const detail = $('#detail');
  const hadFocus = detail.contains(document.activeElement);
  detail.hidden = true;
  if (hadFocus) (detailOpener?.isConnected ? detailOpener : $('#results-section')).focus();
}

worker.onmessage = ({ data }) => {
  if (data.type === 'plan') {
    inFlight = false;
    if (data.seq === gen) {  // an answer for an older form state is dropped
      drawPlan(JSON.parse(data.text), data.ms);
      requestTraffic();
      document.body.dataset.planSeq = String(++seq);
      postHeight();
    }
    pump();
  } else if (data.type === 'script') {
    downloadScript(data.text);
  } else if (data.type === 'calibrate') {
    measure.show(data.text);
  } else if (data.type === 'fleet') {
    fleet?.renderFleet(data.text);
  } else if (data.type === 'traffic') {
    // Only the answer for the newest plan is drawn.
    if (data.seq === trafficSeq) {
      import('./traffic-view.js').then((m) => m.renderTraffic($('#traffic-section'), data.text));
    }
  } else if (data.type === 'launch' && data.seq === detailSeq) {
    import('./launch-view.js').then((m) => m.renderLaunch($('#launch-box'), data.text));
  } else if (data.type === 'limits' && data.seq === detailSeq) {
    import('./limits-view.js').then((m) => m.renderLimits($('#limits-list'), data.text,
      $('#limits-run').dataset.count));
  } else if (data.type === 'catalog') {
    onCatalog(data);
  } else if (data.type === 'fatal') {
    inFlight = false;
    showErrors([{ path: '', message: data.message }]);
    setStatus('error', '');
    pump();
  }
};

// The worker keeps the catalog it had when a custom part is invalid, so the labels here change
// only on success.
function onCatalog({ envelope, part, source, engine }) {
  if (engine) engineVersion = engine;
  const box = $('#catalog-errors');
  if (!envelope.ok) {
    box.replaceChildren(el('p', { text: `${source}:` }),
      ...envelope.errors.map((e) => el('p', { text: errorLine(e) })));
    return;
  }
  if (part) {
    box.replaceChildren();
    customParts[part] = source;
  }
  const c = envelope.result;
  catalogVersion = c.version ?? c.catalog_version ?? '';
  const custom = Object.entries(customParts).map(([p, s]) => `${p}: ${s}`).join(', ');
  $('#catalog-version').textContent = custom ? `${catalogVersion} (${custom})` : catalogVersion;
  $('#model-list').replaceChildren(...c.models.map((m) => el('option', { value: m.id, label: m.name })));
  modelNames = new Map(c.models.map((m) => [m.id, m.name]));
  catalogGpus = new Map(c.gpus.map((g) => [g.id, g]));
  noteSharedVersion();
  schedule();
}

// A link made with another catalog or engine version may show other numbers: say so (the
// link's migration notice; tests/web/golden-links.json pins what a version must reproduce).
function noteSharedVersion() {
  const note = $('#share-notice');
  const lines = [];
  if (sharedVersion && sharedVersion !== catalogVersion) {
    lines.push(t('share_other_catalog', sharedVersion, catalogVersion));
  }
  if (sharedEngine && engineVersion && sharedEngine !== engineVersion) {
    lines.push(t('share_other_engine', sharedEngine, engineVersion));
  }
  note.hidden = lines.length === 0;
  note.textContent = lines.join(' ');
}

function catalogFailed(source, message) {
  onCatalog({ envelope: { ok: false, errors: [{ path: '', message }] }, source });
}

function loadCatalogText(text, source) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    catalogFailed(source, `not JSON: ${err.message}`);
    return;
  }
  const part = parsed && Array.isArray(parsed.models) ? 'models' : 'gpus';
  worker.postMessage({ type: 'catalog', part, text, source });
}

function postHeight() {
  if (embed && window.parent !== window) {
    // The body's own height: the document's scrollHeight never drops below the frame's height.
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    window.parent.postMessage({ type: 'gpuplan:height', height }, '*');
  }
}

function shareUrl(embedMode) {
  const url = new URL(location.href);
  if (embedMode) url.searchParams.set('embed', '1'); else url.searchParams.delete('embed');
  url.hash = encodeShare(state, catalogVersion, engineVersion);
  return url.toString();
}

async function copy(text, field) {
  field.value = text;
  field.select();
  try { await navigator.clipboard.writeText(text); setStatus(document.body.dataset.status, t('copied')); } catch { /* the field holds it */ }
}

const isShareHash = (hash) => /^#\d+\./.test(hash);

// Reads the share link in the hash, if any, into the form (the defaults when it is broken).
function applyShare() {
  if (isShareHash(location.hash)) {
    try {
      const shared = decodeShare(location.hash);
      state = shared.state;
      sharedVersion = shared.catalogVersion;
      sharedEngine = shared.engineVersion;
      shareError = null;
    } catch (err) {
      state = { ...kDefaults };
      sharedVersion = null;  // a broken link names no versions: no stale notice from the last one
      sharedEngine = null;
      shareError = err.message;
    }
  }
  writeForm();
}

// Calibration factors are page state: in the share link, and kept in this browser so a later
// visit without a link plans with them too (the banner and the row marks say so).
function setCalibration(factors) {
  Object.assign(state, calibrationState(factors));
  try {
    if (factors) localStorage.setItem(kCalibrationStore, JSON.stringify(factors));
    else localStorage.removeItem(kCalibrationStore);
  } catch { /* storage refused: the share link still carries them */ }
  schedule();
}

function storedCalibration() {
  try {
    const f = JSON.parse(localStorage.getItem(kCalibrationStore) ?? 'null');
    return f && typeof f === 'object' ? calibrationState(f) : {};
  } catch {
    return {};
  }
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem('gpuplan.theme', theme);
}

function init() {
  if (embed) document.body.classList.add('embed');
  const lang = preferredLanguage();
  $('#lang').value = lang;
  setLanguage(lang);
  $('#lang').addEventListener('change', (e) => {
    localStorage.setItem('gpuplan.lang', e.target.value);
    setLanguage(e.target.value);
    showRelevant();
    fleet?.syncFleetForm();
    noteSharedVersion();
    if (lastDraw) drawPlan(lastDraw.envelope, lastDraw.ms);
  });
  const theme = localStorage.getItem('gpuplan.theme') || 'auto';
  $('#theme').value = theme;
  applyTheme(theme);
  $('#theme').addEventListener('change', (e) => applyTheme(e.target.value));

  measure = new MeasurePanel(worker, { onApply: setCalibration, onClear: () => setCalibration(null) });
  // The fleet text is page state too (share link), read by readForm like the form's fields;
  // the fleet panel's code loads when the panel comes into view (or a link holds a fleet): it
  // is not needed for the first recommendation.
  new IntersectionObserver((seen, observer) => {
    if (seen.some((e) => e.isIntersecting)) {
      observer.disconnect();
      loadFleet();
    }
  }).observe($('#fleet-section'));
  if (!isShareHash(location.hash)) Object.assign(state, storedCalibration());
  applyShare();
  // A share link pasted into a tab that already shows the page changes only the hash.
  window.addEventListener('hashchange', () => {
    if (!isShareHash(location.hash)) return;
    applyShare();
    if (catalogVersion) {
      noteSharedVersion();
      schedule();
    }
  });
  // The skip link moves focus without touching the hash, which holds the share link.
  $('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    $('#results-section').focus();
  });
  const edited = () => {
    shareError = null;
    schedule();
  };
  $('#form').addEventListener('input', edited);
  $('#form').addEventListener('change', edited);
  $('#form').addEventListener('submit', (e) => e.preventDefault());
  $('#kind').addEventListener('change', () => {
    // A training stack cannot serve, nor an engine train: the choice goes back to generic.
    const chosen = $('#framework').selectedOptions[0];
    if (chosen?.dataset.for && (chosen.dataset.for === 'training') !== kTraining.includes($('#kind').value)) {
      $('#framework').value = '';
    }
    if (state.kind === 'qlora' && !['nf4', 'int4', 'gptq_int4', 'awq_int4'].includes($('#weights').value)) {
      $('#weights').value = 'nf4';
      schedule();
    }
  });
  for (const button of document.querySelectorAll('th button[data-sort]')) {
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
  $('#detail-close').addEventListener('click', closeDetail);
  $('#launch-run').addEventListener('click', (e) => {
    $('#launch-box').replaceChildren();
    worker.postMessage({ type: 'launch', request: e.currentTarget.dataset.request, seq: detailSeq });
  });
  $('#limits-run').addEventListener('click', (e) => {
    $('#limits-list').replaceChildren();
    worker.postMessage({ type: 'limits', request: e.currentTarget.dataset.request, seq: detailSeq });
  });
  $('#download-script').addEventListener('click', (e) => {
    worker.postMessage({ type: 'script', request: e.currentTarget.dataset.request });
  });
  $('#share').addEventListener('click', () => copy(shareUrl(false), $('#share-url')));
  $('#copy-embed').addEventListener('click', () => copy(
    `<iframe src="${shareUrl(true)}" title="gpuplan" width="100%" height="900" style="border:0"></iframe>`,
    $('#embed-code')));
  $('#export').addEventListener('click', async () => {
    const format = $('#export-format').value;
    if (format.startsWith('sheet-')) {
      // Fetched on first use: the first load stays within its budget.
      const { procurementSheet } = await import('./procurement.js');
      $('#export-out').value = procurementSheet(format.slice(6), {
        lang: $('#lang').value, state, recs: sortedRows().map((r) => r.rec), gpus: catalogGpus,
        link: shareUrl(false), catalogVersion, engineVersion, date: new Date().toISOString().slice(0, 10),
        fleet: fleet?.latestFleet() ?? null,
      });
      return;
    }
    $('#export-out').value = exportPlan(format, sortedRows().map((r) => r.summary),
      lastRequest ? JSON.parse(lastRequest) : null, catalogVersion);
  });
  $('#catalog-file').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (file) loadCatalogText(await file.text(), file.name);
  });
  if (embed) new ResizeObserver(postHeight).observe(document.body);

  worker.postMessage({ type: 'catalog', source: 'bundled' });
  const custom = params.get('catalog');
  if (custom) {
    fetch(new URL(custom, location.href)).then((r) => {
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return r.text();
    }).then((text) => loadCatalogText(text, custom))
      .catch((err) => catalogFailed(custom, err.message));
  }
}

init();

// Wires the six-line form to the engine worker: every input change re-plans (the latest one
// wins), the URL hash always holds the share link, and the results are drawn by render.js.
import { preferredLanguage, setLanguage, t } from './i18n.js';
import { buildRequest, decodeShare, encodeShare, InputError, kDefaults, kTraining } from './state.js';
import { el, exportPlan, renderDetail, renderList, renderTable, sortRows, summarize } from './render.js';

const $ = (sel) => document.querySelector(sel);
const params = new URLSearchParams(location.search);
const embed = params.get('embed') === '1';
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });

let state = { ...kDefaults };
let catalogVersion = '';
let sharedVersion = null;
let seq = 0;
let inFlight = false;
let pending = null;
let rows = [];
let result = null;
let sort = { key: null, dir: 1 };
let lastRequest = null;
let modelNames = new Map();

function setStatus(status, text) {
  document.body.dataset.status = status;
  $('#status').textContent = text;
}

function showErrors(list) {
  const box = $('#errors');
  box.replaceChildren(...list.map((e) => el('p', { text: `${e.path || '(root)'}: ${e.message}` })));
}

function readForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = document.getElementById(k);
    if (input) state[k] = input.value;
  }
}

function writeForm() {
  for (const k of Object.keys(kDefaults)) {
    const input = document.getElementById(k);
    if (input) input.value = state[k];
  }
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
  history.replaceState(null, '', `${location.pathname}${location.search}#${encodeShare(state, catalogVersion)}`);
  let request;
  try {
    request = buildRequest(state);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    showErrors([{ path: `/${err.field}`, message: err.message.slice(err.field.length + 2) }]);
    document.body.dataset.planSeq = String(++seq);
    setStatus('error', '');
    return;
  }
  pending = JSON.stringify(request, null, 2);
  pump();
}

function pump() {
  if (inFlight || pending === null || !catalogVersion) return;
  inFlight = true;
  lastRequest = pending;
  pending = null;
  setStatus('busy', t('busy'));
  worker.postMessage({ type: 'plan', seq: seq + 1, request: lastRequest });
}

function drawPlan(envelope, ms) {
  $('#request-json').textContent = lastRequest;
  $('#detail').hidden = true;
  if (!envelope.ok) {
    showErrors(envelope.errors);
    rows = [];
    result = null;
    renderTable($('#results tbody'), [], true, () => {});
    setStatus('error', '');
    return;
  }
  showErrors([]);
  result = envelope.result;
  rows = result.recommendations.map((rec) => ({ rec, summary: summarize(rec) }));
  drawRows();
  renderList($('#advice'), result.advice, (a) => a.message);
  renderList($('#rejected'), result.rejected, (r) => `${r.gpu}: ${r.reason ?? r.message ?? ''}`);
  const warnings = result.warnings.map((w) => w.message);
  setStatus('ready', `${t('ready')} ${ms.toFixed(0)} ms · ${result.setups_evaluated} ${t('setups')}` +
    (rows.length ? '' : ` · ${t('no_rows')}`) + (warnings.length ? ` · ${warnings.join(' · ')}` : ''));
  document.body.dataset.planMs = ms.toFixed(1);
  // Navigation start to the first recommendation drawn: the budget script reads it.
  document.body.dataset.firstPlanAt ??= performance.now().toFixed(0);
}

function drawRows() {
  const training = kTraining.includes(result?.request_normalized?.workload?.kind ?? state.kind);
  renderTable($('#results tbody'), sortRows(rows, sort.key, sort.dir), training, (rec) => {
    renderDetail($('#detail'), rec);
    $('#detail').focus();
  });
}

worker.onmessage = ({ data }) => {
  if (data.type === 'plan') {
    inFlight = false;
    seq = Math.max(seq, data.seq);
    drawPlan(JSON.parse(data.text), data.ms);
    document.body.dataset.planSeq = String(seq);
    postHeight();
    pump();
  } else if (data.type === 'catalog') {
    onCatalog(data);
  } else if (data.type === 'fatal') {
    inFlight = false;
    showErrors([{ path: '', message: data.message }]);
    setStatus('error', '');
  }
};

function onCatalog({ envelope, custom, source }) {
  const box = $('#catalog-errors');
  if (!envelope.ok) {
    box.replaceChildren(el('p', { text: `${source}:` }),
      ...envelope.errors.map((e) => el('p', { text: `${e.path || '(root)'}: ${e.message}` })));
    if (catalogVersion) return;  // the bundled catalog stays in use
  } else {
    box.replaceChildren();
    const c = envelope.result;
    catalogVersion = c.version ?? c.catalog_version ?? '';
    $('#catalog-version').textContent = custom ? `${catalogVersion} (${source})` : catalogVersion;
    $('#model-list').replaceChildren(...c.models.map((m) => el('option', { value: m.id, label: m.name })));
    modelNames = new Map(c.models.map((m) => [m.id, m.name]));
    noteSharedVersion();
  }
  schedule();
}

function noteSharedVersion() {
  const note = $('#share-notice');
  note.hidden = !sharedVersion || sharedVersion === catalogVersion;
  if (!note.hidden) note.textContent = t('share_other_catalog', sharedVersion, catalogVersion);
}

async function loadCatalogText(text, source) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    onCatalog({ envelope: { ok: false, errors: [{ path: '', message: `not JSON: ${err.message}` }] }, source });
    return;
  }
  const part = parsed && Array.isArray(parsed.models) ? 'models' : 'gpus';
  worker.postMessage({ type: 'catalog', [part]: text, source });
}

function postHeight() {
  if (embed && window.parent !== window) {
    window.parent.postMessage({ type: 'gpuplan:height', height: document.documentElement.scrollHeight }, '*');
  }
}

function shareUrl(embedMode) {
  const url = new URL(location.href);
  if (embedMode) url.searchParams.set('embed', '1'); else url.searchParams.delete('embed');
  url.hash = encodeShare(state, catalogVersion);
  return url.toString();
}

async function copy(text, field) {
  field.value = text;
  field.select();
  try { await navigator.clipboard.writeText(text); setStatus(document.body.dataset.status, t('copied')); } catch { /* the field holds it */ }
}

// Reads the share link in the hash, if any, into the form; answers whether it did.
function applyShare() {
  if (location.hash.length > 1) {
    try {
      const shared = decodeShare(location.hash);
      state = shared.state;
      sharedVersion = shared.catalogVersion;
    } catch (err) {
      showErrors([{ path: 'share link', message: err.message }]);
      return false;
    }
  }
  writeForm();
  return true;
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
    if (result) drawRows();
  });
  const theme = localStorage.getItem('gpuplan.theme') || 'auto';
  $('#theme').value = theme;
  applyTheme(theme);
  $('#theme').addEventListener('change', (e) => applyTheme(e.target.value));

  applyShare();
  // A share link pasted into a tab that already shows the page changes only the hash.
  window.addEventListener('hashchange', () => {
    if (applyShare() && catalogVersion) {
      noteSharedVersion();
      schedule();
    }
  });
  $('#form').addEventListener('input', schedule);
  $('#form').addEventListener('change', schedule);
  $('#form').addEventListener('submit', (e) => e.preventDefault());
  $('#kind').addEventListener('change', () => {
    if (state.kind === 'qlora' && !['nf4', 'int4', 'gptq_int4', 'awq_int4'].includes($('#weights').value)) {
      $('#weights').value = 'nf4';
      schedule();
    }
  });
  for (const th of document.querySelectorAll('th button[data-sort]')) {
    th.addEventListener('click', () => {
      sort = { key: th.dataset.sort, dir: sort.key === th.dataset.sort ? -sort.dir : 1 };
      for (const other of document.querySelectorAll('th')) other.removeAttribute('aria-sort');
      th.parentElement.setAttribute('aria-sort', sort.dir > 0 ? 'ascending' : 'descending');
      drawRows();
    });
  }
  $('#detail-close').addEventListener('click', () => { $('#detail').hidden = true; });
  $('#share').addEventListener('click', () => copy(shareUrl(false), $('#share-url')));
  $('#copy-embed').addEventListener('click', () => copy(
    `<iframe src="${shareUrl(true)}" title="gpuplan" width="100%" height="900" style="border:0"></iframe>`,
    $('#embed-code')));
  $('#export').addEventListener('click', () => {
    $('#export-out').value = exportPlan($('#export-format').value, rows.map((r) => r.summary),
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
      .catch((err) => onCatalog({ envelope: { ok: false, errors: [{ path: '', message: err.message }] }, source: custom }));
  }
}

init();

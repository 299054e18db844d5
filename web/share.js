// @ts-check
// What leaves the page: the share link the URL hash always holds (and reads back), the embed
// code and its height messages, and the exports (the procurement sheet's module loads on first use).
import { language, t } from './i18n.js';
import { decodeShare, encodeShare, kDefaults, kTraining } from './state.js';
import { exportPlan } from './render.js';
import { setState, state, writeForm } from './form.js';
import { catalogGpus, catalogVersion, engineVersion, fileCatalogParts, modelNames } from './catalog-loader.js';
import { lastRequest, rankedRows, setStatus, sortedRows } from './recommendations.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
const embed = new URLSearchParams(location.search).get('embed') === '1';
// A wiki page that documents a decision shows the link's result, frozen: no form.
const resultView = new URLSearchParams(location.search).get('view') === 'result';
let sharedVersion = null;
let sharedEngine = null;

export const isShareHash = (hash) => /^#\d+\./.test(hash);

export function writeShareHash() {
  history.replaceState(null, '', `${location.pathname}${location.search}#${encodeShare(state, catalogVersion, engineVersion)}`);
}

// The compact views' one-line summary and their way to the full planner, for the form's state.
export function drawEmbedSummary() {
  if (embed || resultView) {
    // The six lines in one line, the form behind a button.
    $('#embed-summary').hidden = false;
    $('#embed-summary-text').textContent = t('embed_summary', t(`kind_${state.kind}`),
      $('#model-name').textContent || state.model, state.weights, state.max_gpus || '64');
    // The compact views end with the way to the full planner, on the same request.
    const full = $('#embed-full');
    full.href = shareUrl(false, { plain: true });
    full.textContent = t('embed_full');
    $('#embed-more').hidden = false;
  }
}

// Reads the share link in the hash, if any, into the form (the defaults when it is broken).
export function applyShare() {
  if (isShareHash(location.hash)) {
    try {
      const shared = decodeShare(location.hash);
      setState(shared.state, null);
      sharedVersion = shared.catalogVersion;
      sharedEngine = shared.engineVersion;
    } catch (err) {
      setState({ ...kDefaults }, err.message);
      sharedVersion = null;  // a broken link names no versions: no stale notice from the last one
      sharedEngine = null;
    }
  } else {
    // No link: the market this browser chose last (preferences.js keeps it).
    state.market = localStorage.getItem('gpuplan.market') ?? '';
  }
  writeForm();
}

// A link made with another catalog or engine version may show other numbers: say so (the
// link's migration notice; tests/web/golden-links.json pins what a version must reproduce).
export function noteSharedVersion() {
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

export function postHeight() {
  if ((embed || resultView) && window.parent !== window) {
    // The body's own height: the document's scrollHeight never drops below the frame's height.
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    window.parent.postMessage({ type: 'gpuplan:height', height }, '*');
  }
}

function shareUrl(embedMode, { plain = false } = {}) {
  const url = new URL(location.href);
  if (embedMode) url.searchParams.set('embed', '1'); else url.searchParams.delete('embed');
  if (plain) url.searchParams.delete('view');
  url.hash = encodeShare(state, catalogVersion, engineVersion);
  return url.toString();
}

async function copy(text, field) {
  field.value = text;
  field.select();
  try { await navigator.clipboard.writeText(text); setStatus(document.body.dataset.status, t('copied')); } catch { /* the field holds it */ }
}

// latestFleet() gives the fleet panel's answer, if any, for the procurement sheet.
// What an export says above its table: the model, the workload, the six
// lines (the procurement sheet's words, fetched on first use), the versions and the link.
async function exportContext() {
  const { requirementLines } = await import('./procurement.js');
  const lang = language();
  const preset = !state.hf.trim() && !String(state.layers ?? '').trim();
  const model = preset ? (modelNames.get(state.model) ?? state.model) : state.hf.trim() ? 'config.json'
    : `${state.layers} × ${state.hidden}`;
  const kind = t(`kind_${state.kind}`);
  const workload = kTraining.includes(state.kind)
    ? t('exp_workload_training', kind, state.tokens, state.seq_len)
    : t('exp_workload_serving', kind, state.concurrency, state.prompt_tokens, state.output_tokens);
  return { model, workload, requirements: requirementLines(lang, state), engineVersion, link: shareUrl(false) };
}

export function initShare(latestFleet) {
  if (embed) document.body.classList.add('embed');
  if (resultView) document.body.classList.add('result-view');
  $('#embed-edit').addEventListener('click', (e) => {
    const open = document.body.classList.toggle('embed-form-open');
    e.currentTarget.setAttribute('aria-expanded', String(open));
  });
  $('#share').addEventListener('click', () => {
    copy(shareUrl(false), $('#share-url'));
    // A catalog read from a file stays on this computer: the receiver plans with the bundled
    // one unless the file is published and named with ?catalog=URL.
    const parts = fileCatalogParts();
    const note = $('#share-note');
    note.hidden = parts.length === 0;
    note.textContent = parts.length ? t('share_file_catalog', parts.join(', ')) : '';
  });
  $('#copy-embed').addEventListener('click', () => copy(
    `<iframe src="${shareUrl(true)}" title="gpuplan" width="100%" height="900" style="border:0"></iframe>`,
    $('#embed-code')));
  $('#export').addEventListener('click', async () => {
    const format = $('#export-format').value;
    if (format.startsWith('sheet-')) {
      // Fetched on first use: the first load stays within its budget.
      const { procurementSheet } = await import('./procurement.js');
      $('#export-out').value = procurementSheet(format.slice(6), {
        // The engine's order: sorting a column never changes which option is first.
        lang: language(), state, recs: rankedRows().map((r) => r.rec), gpus: catalogGpus,
        link: shareUrl(false), catalogVersion, engineVersion, date: new Date().toISOString().slice(0, 10),
        fleet: latestFleet(),
      });
      return;
    }
    $('#export-out').value = exportPlan(format, sortedRows().map((r) => r.summary),
      lastRequest ? JSON.parse(lastRequest) : null, catalogVersion, await exportContext());
  });
  if (embed || resultView) new ResizeObserver(postHeight).observe(document.body);
}

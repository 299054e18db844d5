// @ts-check
// Start-up and wiring: every input change re-plans (engine-client.js hands on only the newest
// answer), the URL hash always holds the share link, and each panel's module draws its part.
import { buildRequest, calibrationOf, hubIdOf, InputError } from './state.js';
import { showBanner } from './calibration-view.js';
import { initPlans, newFormState, plan } from './engine-client.js';
import { initForm, readForm, showErrors, showRelevant, state, storedCalibration } from './form.js';
import { catalogVersion, initCatalog, modelNames } from './catalog-loader.js';
import { initDetail } from './detail-view.js';
import { drawPlan, initTable, markStale, planSent, redrawPlan, requestTraffic, setStatus } from './recommendations.js';
import { applyShare, drawEmbedSummary, initShare, isShareHash, noteSharedVersion, postHeight, writeShareHash } from './share.js';
import { initPreferences } from './preferences.js';
import { t } from './i18n.js';
import { setText } from './render.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
let seq = 0;              // drawn results so far (body[data-plan-seq])
let fleet = null;         // fleet-view.js once loaded
let fleetLoading = null;

function loadFleet() {
  fleetLoading ??= import('./fleet-view.js').then((m) => {
    m.initFleet({
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

// model-sources.js (a Hub id, a GGUF file) loads when the model field names an id, a share
// link holds a config read from one, or a .gguf file is chosen.
let sources = null;
let sourcesLoading = null;
let hubTimer = 0;
function loadSources() {
  sourcesLoading ??= import('./model-sources.js').then((m) => {
    m.initSources({
      schedule: () => schedule(),
      failed() {
        plan(null);
        markStale();
        $('#request-json').textContent = '';
        setStatus('error', '');
        planDrawn();
      },
    });
    sources = m;
    return m;
  }).catch((err) => {
    sourcesLoading = null;
    $('#hub-status').hidden = false;
    $('#hub-status').textContent = `model-sources.js: ${err.message}`;
  });
  return sourcesLoading;
}

// A config read for another model goes when the model field changes; an id not yet read is
// asked of the Hub first (answers true: the plan waits for it).
function modelSource() {
  const hub = hubIdOf(state.model);
  if (state.hf_id && state.model !== state.hf_id) {
    state.hf = '';
    state.hf_id = '';
    $('#hf').value = '';
  }
  if (state.hf_id && !state.hf.trim()) state.hf_id = '';  // its config was deleted: read again
  if (hub && state.hf_id !== hub) {
    // Its config pasted after the Hub could not be read: planned with the id as its label.
    if (state.hf.trim() && sources?.hasFailed(hub)) state.hf_id = hub;
    else {
      sources?.forget(state.model);
      plan(null);
      markStale();
      $('#request-json').textContent = '';
      if (sources?.hasFailed(hub)) {  // said why; typing the id again asks again
        setStatus('error', '');
        sources.draw();
        planDrawn();
      } else {
        // Asked once typing pauses: not for every prefix of the id on the way.
        setStatus('busy', t('hub_reading', hub));
        clearTimeout(hubTimer);
        hubTimer = setTimeout(() => loadSources().then((m) => {
          if (hubIdOf(state.model) === hub) m?.readHub(hub);
        }), 400);
      }
      return true;
    }
  }
  sources?.forget(state.model);
  if (state.hf_id && !sources) loadSources().then((m) => m?.draw());
  sources?.draw();
  return false;
}

// The share link in the address follows the form once typing pauses: history.replaceState
// takes 2-3 ms of the main thread, and on a two-core machine it slowed the engine's worker
// beside it as much again (Chromium on this project's VM: a re-plan took 19-21 ms with it on
// every keystroke, 13-14 ms with it here). body[data-share] says whether one is pending;
// leaving the page writes it at once. The copy buttons build their link from the form, not
// from the address.
const kShareDelayMs = 250;
let shareTimer = 0;
function flushShare() {
  if (!shareTimer) return;
  clearTimeout(shareTimer);
  shareTimer = 0;
  writeShareHash();
  document.body.dataset.share = 'written';
}
function shareSoon() {
  clearTimeout(shareTimer);
  shareTimer = setTimeout(flushShare, kShareDelayMs);
  document.body.dataset.share = 'pending';
}
window.addEventListener('pagehide', flushShare);

function planDrawn() {
  document.body.dataset.planSeq = String(++seq);
  postHeight();
}

function schedule() {
  readForm();
  const waiting = modelSource();
  newFormState();
  let request = null;
  let calibration;
  let inputError = null;
  if (!waiting) {
    try {
      calibration = calibrationOf(state);
      request = buildRequest(state);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      inputError = err;
    }
  }
  // The engine starts on the request first; the rest of the form is drawn while it works.
  if (request) plan(JSON.stringify(request, null, 2));
  showRelevant();
  const preset = !state.hf.trim() && !state.layers.trim();
  setText($('#model-name'), preset ? (modelNames.get(state.model) ?? '') : '');
  drawEmbedSummary();
  shareSoon();
  if (waiting) return;
  if (calibration !== undefined) showBanner(calibration);
  if (inputError) {
    const err = inputError;
    plan(null);  // and a plan still running for an older state will not be drawn
    markStale();
    $('#request-json').textContent = '';
    showErrors([{ path: `/${err.field}`, message: err.message.slice(err.field.length + 2), code: err.code, params: err.params }]);
    setStatus('error', '');
    planDrawn();
  }
}

function init() {
  initPlans({
    ready: () => Boolean(catalogVersion),
    sending: planSent,
    drawn(data) {
      drawPlan(JSON.parse(data.text), data.ms);
      requestTraffic();
      planDrawn();
    },
    failed(data) {
      showErrors([{ path: '', message: data.message }]);
      setStatus('error', '');
    },
  });
  initShare(() => fleet?.latestFleet() ?? null);
  initPreferences(() => {
    showRelevant();
    sources?.draw();
    fleet?.syncFleetForm();
    fleet?.redrawFleet();
    noteSharedVersion();
    redrawPlan();
  });
  initDetail();
  // The fleet text is page state too (share link), read by readForm like the form's fields;
  // the fleet panel's code loads when the panel comes into view (or a link holds a fleet): it
  // is not needed for the first recommendation.
  new IntersectionObserver((seen, observer) => {
    if (seen.some((e) => e.isIntersecting)) {
      observer.disconnect();
      loadFleet();
    }
  }).observe($('#fleet-section'));
  initForm({
    schedule,
    written() {
      if (fleet) fleet.syncFleetForm(); else if (state.fleet) loadFleet();
    },
  });
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
  $('#gguf-file').addEventListener('change', () => loadSources().then((m) => m?.readChosenFile()));
  initTable();
  initCatalog(() => {
    noteSharedVersion();
    schedule();
  });
}

init();

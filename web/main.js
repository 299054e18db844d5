// Start-up and wiring: every input change re-plans (engine-client.js hands on only the newest
// answer), the URL hash always holds the share link, and each panel's module draws its part.
import { buildRequest, calibrationOf, InputError } from './state.js';
import { showBanner } from './calibration-view.js';
import { initPlans, newFormState, plan } from './engine-client.js';
import { initForm, readForm, showErrors, showRelevant, state, storedCalibration } from './form.js';
import { catalogVersion, initCatalog, modelNames } from './catalog-loader.js';
import { initDetail } from './detail-view.js';
import { drawPlan, initTable, markStale, planSent, redrawPlan, requestTraffic, setStatus } from './recommendations.js';
import { applyShare, initShare, isShareHash, noteSharedVersion, postHeight, writeShareHash } from './share.js';
import { initPreferences } from './preferences.js';

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

function planDrawn() {
  document.body.dataset.planSeq = String(++seq);
  postHeight();
}

function schedule() {
  readForm();
  showRelevant();
  const preset = !state.hf.trim() && !state.layers.trim();
  $('#model-name').textContent = preset ? (modelNames.get(state.model) ?? '') : '';
  writeShareHash();
  newFormState();
  let request;
  try {
    showBanner(calibrationOf(state));
    request = buildRequest(state);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    plan(null);  // and a plan still running for an older state will not be drawn
    markStale();
    $('#request-json').textContent = '';
    showErrors([{ path: `/${err.field}`, message: err.message.slice(err.field.length + 2), code: err.code, params: err.params }]);
    setStatus('error', '');
    planDrawn();
    return;
  }
  plan(JSON.stringify(request, null, 2));
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
  initTable();
  initCatalog(() => {
    noteSharedVersion();
    schedule();
  });
}

init();

// @ts-check
// The catalog the engine plans with: the bundled one, then a custom gpus.json or models.json
// from a file or ?catalog=URL. The worker validates each; the labels here follow what it holds.
import { el, errorLine } from './render.js';
import { ask, onAnswer } from './engine-client.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);

export let catalogVersion = '';
export let engineVersion = '';
export let modelNames = new Map();
export let catalogGpus = new Map();
const customParts = {};  // part ('gpus' | 'models') -> the file or URL it came from
let loaded = () => {};

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
  loaded();
}

// The custom parts loaded from a file, which a link cannot carry.
export function fileCatalogParts() {
  return Object.keys(customParts).filter((part) => fromFile[part] === customParts[part]);
}
const fromFile = {};  // part -> the local file last sent for it (customParts says which took)

function catalogFailed(source, message) {
  onCatalog({ envelope: { ok: false, errors: [{ path: '', message }] }, part: undefined, source, engine: undefined });
}

function loadCatalogText(text, source, isFile = false) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    catalogFailed(source, `not JSON: ${err.message}`);
    return;
  }
  const part = parsed && Array.isArray(parsed.models) ? 'models' : 'gpus';
  if (isFile) fromFile[part] = source;
  ask({ type: 'catalog', part, text, source });
}

// onLoaded runs each time the worker takes a catalog.
export function initCatalog(onLoaded) {
  loaded = onLoaded;
  onAnswer('catalog', onCatalog);
  $('#catalog-file').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (file) loadCatalogText(await file.text(), file.name, true);
  });
  ask({ type: 'catalog', source: 'bundled' });
  const custom = new URLSearchParams(location.search).get('catalog');
  if (custom) {
    fetch(new URL(custom, location.href)).then((r) => {
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return r.text();
    }).then((text) => loadCatalogText(text, custom))
      .catch((err) => catalogFailed(custom, err.message));
  }
}

// The engine runs here, off the main thread, so typing never waits for a plan. Messages:
//   in  {type:'catalog', gpus?, models?, source}  load the bundled catalog, or a custom part
//   in  {type:'plan', seq, request}              request is the JSON text sent to the engine
//   out {type:'catalog', envelope, custom}       out {type:'plan', seq, text, ms}
import createGpuplan from './engine/gpuplan.mjs';

const bundled = {};
let engine;

async function text(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
}

async function start() {
  const [mod, gpus, models] = await Promise.all([
    createGpuplan(), text('./catalog/gpus.json'), text('./catalog/models.json')]);
  engine = mod;
  bundled.gpus = gpus;
  bundled.models = models;
  return JSON.parse(engine.loadCatalog(gpus, models));
}
const ready = start();

// A custom part replaces the bundled one; when it is invalid, its errors go back and the
// bundled catalog stays in use, so the page keeps working.
function loadCustom({ gpus, models }) {
  const envelope = JSON.parse(engine.loadCatalog(gpus ?? bundled.gpus, models ?? bundled.models));
  if (!envelope.ok) engine.loadCatalog(bundled.gpus, bundled.models);
  return envelope;
}

self.onmessage = async ({ data }) => {
  try {
    const first = await ready;
    if (data.type === 'catalog') {
      const custom = data.gpus !== undefined || data.models !== undefined;
      const envelope = custom ? loadCustom(data) : first;
      self.postMessage({ type: 'catalog', envelope, custom, source: data.source });
    } else if (data.type === 'plan') {
      const t0 = performance.now();
      // The text crosses to the page as one string: cheaper than cloning the parsed object.
      const text = engine.plan(data.request);
      self.postMessage({ type: 'plan', seq: data.seq, text, ms: performance.now() - t0 });
    }
  } catch (err) {
    self.postMessage({ type: 'fatal', message: String(err && err.message ? err.message : err) });
  }
};

// @ts-check
// The engine runs here, off the main thread, so typing never waits for a plan. Messages:
//   in  {type:'catalog', source}                 the bundled catalog (sent once, first; catalog/page/,
//                                                build-site.sh: the figures without their sources' prose)
//   in  {type:'catalog', part, text, source}     a custom gpus.json or models.json
//   in  {type:'plan', seq, request}              request is the JSON text sent to the engine
//   in  {type:'script', request}                 the measurement script for one setup
//   in  {type:'calibrate', request}              a measured run against its estimate
//   in  {type:'fleet', request}                  a team's workloads (out {type:'fleet', text})
//   in  {type:'limits', request}                 the most one setup takes (out {type:'limits', text})
//   in  {type:'launch', request}                 its launch command (out {type:'launch', text})
//   in  {type:'traffic', request}                card types for a request rate (out {type:'traffic', text})
//   in  {type:'estimate', seq, request}          one setup's complete estimate (out {type:'estimate', seq, text})
//   out {type:'catalog', envelope, part, source, engine}  out {type:'plan', seq, text, ms}
//   out {type:'script', text}                    out {type:'calibrate', text}
// Planning runs on gpuplan-plan, the smaller module (catalog, plan, estimate); the tools
// (script, calibrate, fleet, limits, launch, traffic) on the complete one, fetched and given
// the catalog in use on the first tool message (wasm/bindings.cpp).
import createPlanner from './engine/gpuplan-plan.mjs';

/** @type {{gpus?: string, models?: string}} */
let current = {};  // the gpus.json and models.json texts the engines hold
let engine;
let tools = null;  // a promise of the complete module, once a tool is asked for

function toolEngine() {
  tools ??= import('./engine/gpuplan.mjs').then(async ({ default: createGpuplan }) => {
    const mod = await createGpuplan();
    mod.loadCatalog(current.gpus, current.models);
    return mod;
  }).catch((err) => {
    tools = null;  // the next tool message tries again
    throw err;
  });
  return tools;
}

async function text(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
}

async function start() {
  const [mod, gpus, models] = await Promise.all([
    createPlanner(), text('./catalog/page/gpus.json'), text('./catalog/page/models.json')]);
  engine = mod;
  current = { gpus, models };
  return JSON.parse(engine.loadCatalog(gpus, models));
}
const ready = start();

// A custom part replaces that part of the catalog in use; when it is invalid, its errors go
// back and the catalog in use stays, so the page keeps working and its labels stay true.
function loadCustom(part, partText) {
  const next = { ...current, [part]: partText };
  const envelope = JSON.parse(engine.loadCatalog(next.gpus, next.models));
  if (envelope.ok) current = next;
  else engine.loadCatalog(current.gpus, current.models);
  // A complete module already loaded follows; one loaded later starts from `current`.
  tools?.then((mod) => mod.loadCatalog(current.gpus, current.models), () => {});
  return envelope;
}

const kTools = new Set(['script', 'traffic', 'launch', 'limits', 'fleet', 'calibrate']);

self.onmessage = async ({ data }) => {
  try {
    const first = await ready;
    if (data.type === 'catalog') {
      const envelope = data.part ? loadCustom(data.part, data.text) : first;
      self.postMessage({ type: 'catalog', envelope, part: data.part, source: data.source,
                         engine: engine.version() });
    } else if (data.type === 'estimate') {
      self.postMessage({ type: 'estimate', seq: data.seq, text: engine.estimate(data.request) });
    } else if (kTools.has(data.type)) {
      const mod = await toolEngine();
      // Each tool's answer carries the seq it was asked with (fleet, script and calibrate
      // ignore it); the method is the message's type.
      self.postMessage({ type: data.type, seq: data.seq, text: mod[data.type](data.request) });
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

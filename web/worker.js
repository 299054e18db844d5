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
import createGpuplan from './engine/gpuplan.mjs';

let current = {};  // the gpus.json and models.json texts the engine holds
let engine;

async function text(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
}

async function start() {
  const [mod, gpus, models] = await Promise.all([
    createGpuplan(), text('./catalog/page/gpus.json'), text('./catalog/page/models.json')]);
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
  return envelope;
}

self.onmessage = async ({ data }) => {
  try {
    const first = await ready;
    if (data.type === 'catalog') {
      const envelope = data.part ? loadCustom(data.part, data.text) : first;
      self.postMessage({ type: 'catalog', envelope, part: data.part, source: data.source,
                         engine: engine.version() });
    } else if (data.type === 'script') {
      self.postMessage({ type: 'script', text: engine.script(data.request) });
    } else if (data.type === 'estimate') {
      self.postMessage({ type: 'estimate', seq: data.seq, text: engine.estimate(data.request) });
    } else if (data.type === 'traffic') {
      self.postMessage({ type: 'traffic', seq: data.seq, text: engine.traffic(data.request) });
    } else if (data.type === 'launch') {
      self.postMessage({ type: 'launch', seq: data.seq, text: engine.launch(data.request) });
    } else if (data.type === 'limits') {
      self.postMessage({ type: 'limits', seq: data.seq, text: engine.limits(data.request) });
    } else if (data.type === 'fleet') {
      self.postMessage({ type: 'fleet', text: engine.fleet(data.request) });
    } else if (data.type === 'calibrate') {
      self.postMessage({ type: 'calibrate', text: engine.calibrate(data.request) });
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

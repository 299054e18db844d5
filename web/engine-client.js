// @ts-check
// The one module that talks to the engine worker (worker.js lists its messages). Where only the
// newest question matters, older answers stop here, so no panel draws a stale one.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const handlers = {};

worker.onmessage = ({ data }) => handlers[data.type]?.(data);

export function onAnswer(type, handler) {
  handlers[type] = handler;
}

// Every answer to these is wanted (a catalog, a script, a calibration, a fleet).
export function ask(message) {
  worker.postMessage(message);
}

// An answer asked before the last next() is dropped (traffic follows the newest plan; limits
// and launch, the setup on show).
export function rounds(handlersByType) {
  let round = 0;
  for (const [type, handle] of Object.entries(handlersByType)) {
    handlers[type] = (data) => { if (data.seq === round) handle(data); };
  }
  return {
    next() { round += 1; },
    ask(type, request) { worker.postMessage({ type, request, seq: round }); },
  };
}

// One plan runs at a time; form states typed meanwhile collapse into the newest.
let gen = 0;  // form states so far; only the newest one's plan is handed on
let inFlight = false;
let pending = null;
let hooks = null;

// ready() holds plans until the page has a catalog; a fatal error ends a plan in flight too.
export function initPlans(planHooks) {
  hooks = planHooks;
  handlers.plan = (data) => {
    inFlight = false;
    if (data.seq === gen) hooks.drawn(data);  // an answer for an older form state is dropped
    pump();
  };
  handlers.fatal = (data) => {
    inFlight = false;
    hooks.failed(data);
    pump();
  };
}

export function newFormState() {
  gen += 1;
}

// The newest form state's request text; null when it has none (its errors are shown instead).
export function plan(text) {
  pending = text === null ? null : { gen, text };
  pump();
}

function pump() {
  if (inFlight || pending === null || !hooks.ready()) return;
  inFlight = true;
  hooks.sending(pending.text);
  worker.postMessage({ type: 'plan', seq: pending.gen, request: pending.text });
  pending = null;
}

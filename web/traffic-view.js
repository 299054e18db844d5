// @ts-check
// The traffic table: gpuplan traffic's card types for the form's request rate,
// cheapest first; every number is the engine's, the assumptions listed beneath.
import { el, errorLine, renderList } from './render.js';

const ms = (v) => (v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString('en'));
const usd = (v) => (v == null ? '—' : `$${v < 10 ? v.toFixed(2) : Math.round(v).toLocaleString('en')}`);

export function renderTraffic(section, text) {
  const envelope = JSON.parse(text);
  section.hidden = false;
  const tbody = section.querySelector('tbody');
  if (!envelope.ok) {
    section.querySelector('#traffic-errors').replaceChildren(
      ...envelope.errors.map((e) => el('p', { text: errorLine(e) })));
    tbody.replaceChildren();
    return;
  }
  section.querySelector('#traffic-errors').replaceChildren();
  const r = envelope.result;
  const why = r.assumptions.join('\n');
  tbody.replaceChildren(...r.options.map((o) => el('tr', { dataset: { gpu: o.gpu, cards: String(o.cards) } },
    el('th', { scope: 'row', title: `TP${o.replica.tp} PP${o.replica.pp}, ${o.replica.weights}` }, o.name),
    el('td', { title: why }, `${o.replicas} × ${o.gpus_per_replica}`),
    el('td', {}, String(o.cards)),
    el('td', { title: `${o.requests_per_s_per_replica.toFixed(2)} req/s per replica; prefill ` +
      `${Math.round(100 * o.prefill_share)}% of its time` }, String(o.concurrency_per_replica)),
    el('td', {}, ms(o.tpot_ms)),
    el('td', { title: `mean prompt: ${ms(o.ttft_mean_ms)} ms` }, ms(o.ttft_p95_ms)),
    el('td', {}, `${usd(o.usd_per_hour)} / ${usd(o.usd_per_million_tokens)}`))));
  renderList(section.querySelector('#traffic-assumptions'), r.assumptions, (a) => a);
}

// @ts-check
// The team-fleet panel: gpuplan fleet's request (edited in fleet-form.js or as
// JSON text), its answer as a table. The text travels in the share link (state.fleet); every
// number is the engine's.
import { has, t } from './i18n.js';
import { el, errorLine, noteText, renderList } from './render.js';
import { initFleetForm, markFleetErrors, syncFleetForm } from './fleet-form.js';
import { ask, onAnswer } from './engine-client.js';

export { syncFleetForm };

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);

// A starting point built from the form's model: a weekly fine-tune, a daily evaluation and a
// chat service with a working-day curve.
export function fleetExample(model) {
  const m = { preset: model || 'llama-3.1-8b' };
  return {
    workloads: [
      { name: 'weekly LoRA fine-tune', request: { model: m, workload: { kind: 'lora', seq_len: 4096, tokens: 2e8 } },
        every_days: 7 },
      { name: 'daily evaluation', request: { model: m, workload: { kind: 'inference', mode: 'offline',
        prompt_tokens: 1024, output_tokens: 256 } }, every_days: 1, requests_per_run: 20000 },
      { name: 'chat service', request: { model: m, workload: { kind: 'inference', prompt_tokens: 1024,
        output_tokens: 256 }, constraints: { ttft_ms: 1000, tpot_ms: 50 } },
      concurrency_by_hour: [16, 8, 4, 4, 4, 8, 16, 48, 96, 128, 128, 128, 96, 128, 128, 128, 128, 96, 64, 48,
        48, 32, 32, 16] },
    ],
    constraints: { max_gpus: 16 },
    growth: 1.5,
  };
}

const pct = (v) => `${Math.round(100 * v)}%`;
const money = (v, currency) => (v == null ? '—' : `${Math.round(v).toLocaleString('en')} ${currency}`);

let lastFleet = null;  // the latest answer, for the procurement sheet

export const latestFleet = () => lastFleet;

let lastText = null;     // the latest answer's text, drawn again in another language

export const redrawFleet = () => lastText && renderFleet(lastText);

export function renderFleet(text) {
  lastText = text;
  const envelope = JSON.parse(text);
  lastFleet = envelope.ok ? envelope.result : null;
  const tbody = $('#fleet-table tbody');
  if (!envelope.ok) {
    $('#fleet-errors').replaceChildren(...envelope.errors.map((e) => el('p', { text: errorLine(e) })));
    if (!markFleetErrors(envelope.errors)) $('#fleet-json').open = true;
    tbody.replaceChildren();
    return;
  }
  $('#fleet-errors').replaceChildren();
  markFleetErrors([]);
  const r = envelope.result;
  tbody.replaceChildren(...r.options.map((o) => el('tr', { dataset: { gpu: o.gpu, owned: String(o.owned_cards) } },
    el('th', { scope: 'row', title: o.workloads.map((w) => `${w.name}: ${w.setup}`).join('\n') }, o.name),
    el('td', {}, String(o.owned_cards)),
    el('td', {}, o.serving_pool.peak_cards
      ? `${o.serving_pool.peak_cards} / ${o.serving_pool.min_cards} / ${pct(o.serving_pool.utilization)}` : '—'),
    el('td', {}, o.batch_pool.cards ? `${o.batch_pool.cards} / ${pct(o.batch_pool.utilization)}` : '—'),
    el('td', { dataset: { code: o.share_pools.code }, title: noteText(o.share_pools) },
      has(`share_${o.share_pools.code}`) ? t(`share_${o.share_pools.code}`) : noteText(o.share_pools)),
    el('td', { title: o.cost?.own_basis ?? '' }, o.cost ? `${money(o.cost.own_per_month, o.cost.currency)} / ` +
      `${money(o.cost.rent_per_month, o.cost.currency)}` : '—'))));
  renderList($('#fleet-advice'), r.advice, (a) => noteText(a));
  renderList($('#fleet-rejected'), r.rejected, (x) => `${x.gpu} (${x.workload}): ${x.reason}`);
}

// model() names the form's model (for the example); add() gives the form's plan request.
export function initFleet({ model, add, onChange }) {
  initFleetForm({ add, onChange });
  $('#fleet-example').addEventListener('click', () => {
    $('#fleet').value = JSON.stringify(fleetExample(model()), null, 1);
    syncFleetForm();
    onChange($('#fleet').value);
  });
  $('#fleet').addEventListener('change', () => onChange($('#fleet').value));
  $('#fleet-plan').addEventListener('click', () => {
    onChange($('#fleet').value);
    ask({ type: 'fleet', request: $('#fleet').value });
  });
  // The buttons wait in the page, disabled, until this module is there to answer them.
  for (const b of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll('#fleet-section button'))) b.disabled = false;
  $('#fleet-section').dataset.ready = '1';
  onAnswer('fleet', ({ text }) => renderFleet(text));
}

// @ts-check
// The detail view's "measure, then calibrate" panel and the record table of measured runs.
// Every number comes from the engine's calibrate answer; nothing here computes a factor.
import { t } from './i18n.js';
import { el, errorLine, exportTable, fmt, noteText, setProp, setText } from './render.js';
import { InputError } from './state.js';
import { buildMeasured, kMeasureFields, kRecordColumns, ranOnFromScriptLine, recordsOf, valuesFromScriptLine } from './measure.js';
import { ask, onAnswer } from './engine-client.js';

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
const kRecordsKey = 'gpuplan.records';
const kMaxRecords = 1000;

function loadRecords() {
  try {
    const list = JSON.parse(localStorage.getItem(kRecordsKey) ?? '[]');
    return Array.isArray(list) ? list.filter((r) => r && typeof r === 'object') : [];
  } catch {
    return [];
  }
}

function saveRecords(list) {
  try { localStorage.setItem(kRecordsKey, JSON.stringify(list.slice(-kMaxRecords))); } catch { /* full: kept in the page */ }
}

// A figure in the unit its quantity uses.
function show(quantity, v) {
  if (quantity.startsWith('speedup')) return `×${v.toFixed(2)}`;
  if (quantity.endsWith('_bytes')) return fmt.gib(v);
  if (quantity.endsWith('_ms')) return fmt.ms(v, 2);
  return fmt.rate(v);
}

const pct = (v) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(1)}%`;

// A comparison's quantity in words: peak_allocated_bytes, tokens_per_s@4 (at 4 cards).
function quantityName(q) {
  const [name, at] = String(q).split('@');
  const words = t(`q_${name}`);
  return at ? t('q_at_cards', words === `q_${name}` ? name.replace(/_/g, ' ') : words, at)
    : (words === `q_${name}` ? name.replace(/_/g, ' ') : words);
}

function factorName(path) {
  const f = String(path ?? '').split('/').pop();
  return f && t(`factor_${f}`) !== `factor_${f}` ? t(`factor_${f}`) : f;
}

export function renderDiagnosis(ul, list) {
  ul.replaceChildren(...(list ?? []).map((d) => el('li', { dataset: { code: d.code, basis: d.basis } },
    el('p', { text: noteText(d, 'diag') }),
    el('ol', {}, ...d.remedies.map((r) => {
      const fit = r.fits === undefined ? '' : ` (${r.fits ? t('fits') : t('not_fits')})`;
      return el('li', { dataset: { code: r.code } }, `${noteText(r, 'remedy')}${fit}`);
    })))));
  ul.parentElement.hidden = !list?.length;
}

export class MeasurePanel {
  constructor({ onApply, onClear }) {
    this.setup = null;
    this.result = null;
    this.records = loadRecords();
    $('#measured-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.compare();
    });
    $('#m_paste').addEventListener('input', () => this.paste());
    $('#calibration-apply').addEventListener('click', () => this.result && onApply(this.result.calibration));
    $('#calibration-clear').addEventListener('click', onClear);
    $('#records-export').addEventListener('click', () => {
      const format = $('#records-format').value;
      $('#records-out').value = exportTable(format, kRecordColumns,
        this.records.map((r) => kRecordColumns.map((k) => r[k])), this.records);
    });
    $('#records-clear').addEventListener('click', () => {
      this.records = [];
      saveRecords(this.records);
      this.drawRecords();
    });
    onAnswer('calibrate', ({ text }) => this.show(text));
    this.drawRecords();
  }

  // The fixed setup the detail view shows (what calibrate measures against).
  open(setupRequest) {
    this.setup = setupRequest;
    this.result = null;
    this.ranOn = '';
    $('#calibration-result').hidden = true;
    $('#measure-errors').replaceChildren();
  }

  values() {
    const v = {};
    for (const k of kMeasureFields) {
      const input = /** @type {HTMLInputElement} */ (document.getElementById(`m_${k}`));
      v[k] = input.type === 'checkbox' ? input.checked : input.value;
    }
    return v;
  }

  fail(errors) {
    $('#measure-errors').replaceChildren(...errors.map((e) => el('p', { text: errorLine(e) })));
  }

  paste() {
    const text = $('#m_paste').value;
    if (!text.trim()) return;
    try {
      const values = valuesFromScriptLine(text, this.setup?.parallel?.gpus ?? 1, $('#m_scaling').value);
      for (const [k, v] of Object.entries(values)) /** @type {HTMLInputElement} */ (document.getElementById(`m_${k}`)).value = v;
      // The record rows of this comparison keep the card and library versions it ran with.
      this.ranOn = ranOnFromScriptLine(text);
      $('#measure-errors').replaceChildren();
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      this.fail([{ path: err.field, message: err.message.slice(err.field.length + 2) }]);
    }
  }

  compare() {
    if (!this.setup) return;
    let measured;
    try {
      measured = buildMeasured(this.values(), this.setup.workload.kind !== 'inference');
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      this.fail([{ path: err.field, message: err.message.slice(err.field.length + 2) }]);
      return;
    }
    this.label = $('#m_label').value.trim();
    const request = JSON.stringify({ ...this.setup, measured }, null, 2);
    document.body.dataset.calibrateRequest = request;
    ask({ type: 'calibrate', request });
  }

  // The worker's answer to compare().
  show(text) {
    const envelope = JSON.parse(text);
    if (!envelope.ok) {
      $('#calibration-result').hidden = true;
      this.fail(envelope.errors);
      return;
    }
    $('#measure-errors').replaceChildren();
    const r = this.result = envelope.result;
    $('#comparison tbody').replaceChildren(...r.comparisons.map((c) => el('tr',
      { dataset: { quantity: c.quantity, within: String(c.within_success_line) } },
      el('th', { scope: 'row', title: c.estimate_path }, quantityName(c.quantity)),
      el('td', { dataset: { value: String(c.estimated) } }, show(c.quantity, c.estimated)),
      el('td', { dataset: { value: String(c.measured) } }, show(c.quantity, c.measured)),
      el('td', { dataset: { value: String(c.error) } },
        `${pct(c.error)} · ${c.within_success_line ? t('within') : t('beyond')}`),
      el('td', { dataset: { value: String(c.calibrated) } }, show(c.quantity, c.calibrated)))));
    const f = r.calibration;
    const sep = t('list_sep');
    $('#factors').textContent = `${t('factors')}: ${t('factor_compute')} ×${fmt.number(f.compute)}${sep}` +
      `${t('factor_bandwidth')} ×${fmt.number(f.bandwidth)}${sep}${t('factor_memory')} ×${fmt.number(f.memory)}${sep}` +
      `${t('factor_interconnect')} ×${fmt.number(f.interconnect)}` +
      (f.allocator_slack == null ? '' : `${sep}${t('factor_slack')} ${fmt.number(f.allocator_slack)}`);
    // A note names its factor by the field it is about (/calibration/compute).
    $('#factor-notes').replaceChildren(...r.notes.map((n) => el('li', { dataset: { code: n.code ?? '' } },
      noteText(n, 'factor', { factor: factorName(n.path) }))));
    $('#yardstick').replaceChildren(...r.yardstick.map((y) => el('li',
      { dataset: { code: y.code, met: String(y.params.met === 1) } }, `${y.params.met === 1 ? '✓' : '✗'} ${noteText(y, 'yard')}`)));
    $('#yardstick').parentElement.hidden = r.yardstick.length === 0;
    renderDiagnosis($('#diagnosis-measured'), r.diagnosis);
    $('#calibration-result').hidden = false;
    const run = this.records.reduce((m, x) => Math.max(m, Number(x.run) || 0), 0) + 1;
    this.records.push(...recordsOf(r, { run, at: new Date().toISOString(), label: this.label, ranOn: this.ranOn ?? '' }));
    saveRecords(this.records);
    this.drawRecords();
  }

  drawRecords() {
    const head = el('tr', {}, ...kRecordColumns.map((k) => el('th', { scope: 'col', text: k })));
    $('#records thead').replaceChildren(head);
    $('#records tbody').replaceChildren(...this.records.map((r) => el('tr', {},
      ...kRecordColumns.map((k) => el('td', { text: typeof r[k] === 'number' ? fmt.number(r[k]) : String(r[k] ?? '') })))));
    $('#records-section').hidden = this.records.length === 0;
  }
}

// The banner over the table while factors are in use.
export function showBanner(calibration) {
  const banner = $('#calibration-banner');
  setProp(banner, 'hidden', !calibration);
  if (!calibration) return;
  const f = (k) => fmt.number(calibration[k] ?? 1);
  setText($('#calibration-text'), t('calibration_banner', calibration.measured_on || '?',
    f('compute'), f('bandwidth'), f('memory'), f('interconnect')));
}

// @ts-check
// Turns the engine's plan result into the table, the advice, the detail view and the exports.
// Every text goes in through textContent: nothing from a catalog or a request becomes markup.
import { kFigureUnits } from './figures.js';
import { has, language, t, tn } from './i18n.js';
import { h, patchChildren } from './patch.js';

const GiB = 2 ** 30;

// The contract's error line, as the CLI prints it: "<JSON pointer>: <reason>".
export const errorLine = (e) => `${e.path || '(root)'}: ${e.message}`;

// An input problem in the page's words for its code (err_<code>), else the engine's reason.
export function errorText(e) {
  const words = e.code ? tn(`err_${e.code}`, { ...(e.params ?? {}), field: fieldName(e.path) }) : null;
  return words ?? e.message ?? '';
}

// A node's text, written only when it changes: new text lays the page out again even when it is
// the same words, and the page re-plans on every keystroke.
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

// A property (an input's placeholder, say) written only when it changes, for the same reason.
export function setProp(node, name, value) {
  if (node[name] !== value) node[name] = value;
}

// Makes `target`'s children those of `fresh` (a detached tree built by el()), keeping every
// node whose place and tag are the same and writing only the text and attributes that
// changed: a re-plan then restyles and lays out the figures that moved, not a new table,
// which on a slow machine was most of a re-plan's time. A button's click handler
// (onclick, which el() does not set) follows its node.
export function morphChildren(target, fresh) {
  let o = target.firstChild;
  for (let n = fresh.firstChild; n;) {
    const next = n.nextSibling;
    if (!o) {
      target.append(n);
    } else if (o.nodeType !== n.nodeType || o.nodeName !== n.nodeName) {
      const after = o.nextSibling;
      target.replaceChild(n, o);
      o = after;
    } else {
      morphNode(o, n);
      o = o.nextSibling;
    }
    n = next;
  }
  while (o) {
    const after = o.nextSibling;
    o.remove();
    o = after;
  }
}

function morphNode(o, n) {
  if (n.nodeType === Node.TEXT_NODE) {
    if (o.nodeValue !== n.nodeValue) o.nodeValue = n.nodeValue;
    return;
  }
  const old = o.attributes;
  for (let i = old.length - 1; i >= 0; --i) {
    if (!n.hasAttribute(old[i].name)) o.removeAttribute(old[i].name);
  }
  const now = n.attributes;
  for (let i = 0; i < now.length; ++i) {
    const { name, value } = now[i];
    if (o.getAttribute(name) !== value) o.setAttribute(name, value);
  }
  if (n.nodeName === 'BUTTON' && o.onclick !== n.onclick) o.onclick = n.onclick;
  morphChildren(o, n);
}

export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'className') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

export function pointer(obj, path) {
  return path.split('/').slice(1).reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

export const fmt = {
  gib: (b) => `${(b / GiB).toFixed(1)} GiB`,
  duration(s) {
    if (!Number.isFinite(s)) return '—';
    if (s < 90) return t('dur_s', s.toFixed(0));
    if (s < 5400) return t('dur_min', (s / 60).toFixed(0));
    if (s < 172800) return t('dur_h', (s / 3600).toFixed(1));
    return t('dur_d', (s / 86400).toFixed(1));
  },
  ms: (v, digits) => (Number.isFinite(v) ? `${v.toFixed(digits)} ms` : '—'),
  usd: (v) => (v == null ? '—' : `$${v < 100 ? v.toFixed(2) : Math.round(v).toLocaleString('en')}`),
  watts: (w) => (w >= 10000 ? `${(w / 1000).toFixed(1)} kW` : `${Math.round(w)} W`),
  rate: (v) => (!Number.isFinite(v) ? '—' : `${v >= 1000 ? Math.round(v).toLocaleString('en') : v.toFixed(1)} tok/s`),
  number(v) {
    if (typeof v === 'boolean') return v ? t('yes') : t('no');
    if (typeof v !== 'number') return String(v);
    if (Number.isInteger(v) && Math.abs(v) >= 1e6) return v.toLocaleString('en');
    return Math.abs(v) >= 1000 || Number.isInteger(v) ? String(Math.round(v * 100) / 100) : v.toPrecision(4);
  },
};

// An engine note's numbers in the unit its name says (need_bytes: GiB, wait_s: a duration,
// memory_share: a percentage), for the page's words; each also as name_pct.
const pctText = (v) => `${Math.round(v * 1000) / 10}%`;
const count = (v) => (Math.abs(v) >= 1e4 ? Math.round(v).toLocaleString('en') : fmt.number(v));
export function paramText(k, v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return v;
  if (/_(year|month)$/.test(k)) return String(v);
  if (k.endsWith('_bytes')) return fmt.gib(v);
  if (/tokens_per_s/.test(k)) return fmt.rate(v);
  if (/usd/.test(k)) return fmt.usd(v);
  if (k === 'mfu') return pctText(v);
  if (k.endsWith('_ms')) return fmt.ms(v, 1);
  if (k === 's' || k.endsWith('_s')) return fmt.duration(v);
  if (/(^|_)(watts|w)$/.test(k)) return fmt.watts(v);
  if (/(fraction|share|efficiency|utilization)$/.test(k)) return pctText(v);
  if (/per_month$/.test(k)) return Math.round(v).toLocaleString('en');
  if (k.endsWith('_h')) return fmt.number(Math.round(v * 10) / 10);
  return count(v);
}

function noteValues(params, extra) {
  const out = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    out[k] = paramText(k, v);
    if (typeof v === 'number') out[`${k}_pct`] = pctText(v);
  }
  return { ...out, ...extra };
}

// A request field's name in the user's words, from its JSON pointer (/workload/tokens: the
// form's label for tokens), else its last part without underscores.
export function fieldName(path) {
  const last = String(path ?? '').split('/').filter(Boolean).pop() ?? '';
  return has(last) ? t(last) : last.replace(/_/g, ' ');
}

// Variants of one code that the engine tells apart by a parameter or the field it names.
const kNoteVariant = {
  served_below_request: (n) => (n.params?.served === 0 ? 'served_below_request_none' : null),
  long_run: (n) => (n.path === '/constraints/max_gpus' ? 'long_run_max' : null),
};

// An engine note (advice, warning, infeasibility, verdict, fleet advice: code, params,
// message) in the page's words for its code, in the user's language; the engine's English
// message for a code the page has no words for, or whose numbers are missing. prefix picks
// the family (note, diag, remedy, yard, factor); extra gives the words' other places.
export function noteText(n, prefix = 'note', extra = {}) {
  if (!n) return '';
  const code = kNoteVariant[n.code]?.(n) ?? n.code;
  // A calibration factor's codes carry their family already (factor_derived).
  const key = code?.startsWith(`${prefix}_`) ? code : `${prefix}_${code}`;
  const words = code ? tn(key, noteValues(n.params, { field: fieldName(n.path), ...extra })) : null;
  return words ?? n.message ?? n.reason ?? '';
}

// Wait or switch's verdict: the page's words name the cards (first: the first to finish; best:
// the plan's first card; chosen: the one the verdict takes).
export function verdictText(w, nameOf = (id) => id) {
  const v = w.verdict ?? {};
  const best = nameOf(w.options?.[0]?.gpu ?? '');
  const first = nameOf(w.first_to_finish ?? '');
  const chosen = nameOf(w.chosen ?? w.first_to_finish ?? '');
  const text = noteText(v, 'note', { best, first, chosen });
  const even = v.code === 'switch_now' && v.params?.break_even_tokens > 0 && has('note_switch_now_break_even')
    ? tn('note_switch_now_break_even', noteValues(v.params)) : null;
  return even && text !== v.message ? `${text}${even}` : text;
}

// A figure's name for a JSON pointer of the estimate (/memory/per_gpu_bytes/weights: the
// memory part's words), else its path's last parts without underscores.
export function pointerName(path) {
  const key = `ptr${path.replace(/\//g, '_')}`;
  if (has(key)) return t(key);
  const part = path.match(/^\/memory\/per_gpu_bytes\/([a-z_]+)$/);
  if (part && has(`part_${part[1]}`)) return t(`part_${part[1]}`);
  return path.split('/').filter(Boolean).slice(-2).join(' ').replace(/_/g, ' ');
}

// How each of the engine's units reads (the units: web/figures.js, the engine's figure table).
const kUnitFormat = {
  bytes: (v) => fmt.gib(v), s: (v) => fmt.duration(v), ms: (v) => fmt.ms(v, 1),
  tokens_per_s: (v) => fmt.rate(v), usd: (v) => fmt.usd(v), usd_per_hour: (v) => fmt.usd(v),
  usd_per_million_tokens: (v) => fmt.usd(v), watts: (v) => fmt.watts(v), fraction: (v) => pctText(v),
};

// A figure as its unit says (bytes as GiB, seconds as a duration); a pointer outside the
// table as its name suggests.
export function pointerValue(path, v) {
  if (typeof v !== 'number') return fmt.number(v);
  const format = kUnitFormat[kFigureUnits[path]];
  if (format) return format(v);
  if (/_bytes(\/|_per_gpu$|$)/.test(path)) return fmt.gib(v);
  return paramText(path.split('/').pop(), v);
}

// A figure's likely range from the validation residuals (the result's bands), formatted as
// the figure is.
export function bandText(estimate, path) {
  const b = estimate.bands?.[path];
  if (!b) return '';
  const f = kUnitFormat[kFigureUnits[path]] ?? ((v) => fmt.number(v));
  return `${f(b.low)}–${f(b.high)}`;
}

// A figure's formula: the page's words for the headline figures (formula_<pointer>), else the
// engine's (English); an input's name: the page's words (input_<name>), else without underscores.
export function formulaText(path, x) {
  const key = `formula${path.replace(/\//g, '_')}`;
  return has(key) ? t(key) : (x?.formula ?? '');
}

export function inputName(k) {
  return has(`input_${k}`) ? t(`input_${k}`) : k.replace(/_/g, ' ');
}

function explainTitle(estimate, path) {
  const x = estimate.explain?.[path];
  const b = estimate.bands?.[path];
  const band = b ? [`${t('likely')}: ${bandText(estimate, path)} (${b.basis})`] : [];
  if (!x) return band.join('');
  return [formulaText(path, x), ...(x.assumptions ?? []), ...band].join('\n');
}

// Warnings about whether the card can be had and run where the buyer is (the engine's
// supply_warnings.cpp): drawn on the row itself, not only counted in the warnings column.
const kCaveats = new Set(['card_not_sold_in_market', 'card_restricted_in_market', 'end_of_life_card',
  'bitsandbytes_rocm_from_0_50', 'bitsandbytes_gaudi_from_0_48', 'vllm_vendor_plugin', 'megatron_rocm_fork']);

const kCurrencySign = { USD: '$', CNY: '¥', EUR: '€' };

// The offer a row's price comes from: provider, class, its own price and currency, date.
export function offerText(cost) {
  const o = cost?.offer;
  if (!o) return '';
  if (o.provider_class === 'request') return t('offer_request');
  const price = `${kCurrencySign[o.currency] ?? ''}${o.price}${kCurrencySign[o.currency] ? '' : ` ${o.currency}`}`;
  return t('offer_line', o.provider || '?', t(`class_${o.provider_class}`), price, o.as_of, o.market);
}

// A USD figure in the offer's own currency, at the offer's price over its USD price
// (usd x offer.price / usd_per_gpu_hour): a Chinese buyer reads yuan; null in USD.
export function localCost(cost, usd) {
  const o = cost?.offer;
  if (!o || o.currency === 'USD' || !(cost.usd_per_gpu_hour > 0) || usd == null) return null;
  const v = (usd * o.price) / cost.usd_per_gpu_hour;
  return `${kCurrencySign[o.currency] ?? `${o.currency} `}${v < 100 ? v.toFixed(2) : Math.round(v).toLocaleString('en')}`;
}

// One summary per recommendation: what the table shows, sorts and exports.
export function summarize(rec) {
  const e = rec.estimate;
  const p = rec.parallel;
  const dp = p.gpus / (p.tp * p.pp * p.cp);
  const train = e.performance.training;
  const inf = e.performance.inference;
  // Only the degrees that are not 1 are named: "TP2 DP4 ZeRO-2" reads faster than every axis.
  const axes = [['TP', p.tp], ['PP', p.pp], ['CP', p.cp], ['EP', p.ep]]
    .filter(([, v]) => v > 1).map(([k, v]) => `${k}${v}`);
  const setup = inf
    ? [`${rec.replicas} × ${p.gpus}`, ...axes,
      rec.concurrency_per_replica ? t('setup_per_replica', rec.concurrency_per_replica) : '',
      rec.serving?.n_gpu_layers >= 0 ? t('setup_gpu_layers', rec.serving.n_gpu_layers) : '',
      rec.serving?.n_cpu_moe > 0 ? t('setup_cpu_moe', rec.serving.n_cpu_moe) : ''].filter(Boolean).join(' · ')
    : [[...axes, `DP${dp}`, p.zero ? `ZeRO-${p.zero}` : ''].filter(Boolean).join(' '),
      t('setup_mb_ga', rec.micro_batch, rec.grad_accum)].join(' · ');
  // Serving: parallel.gpus is one replica, and the estimate (throughput, cost, power) is for it.
  return {
    gpu: rec.gpu, name: e.gpu.name, count: rec.count, setup, replicas: inf ? rec.replicas : 1,
    memory_bytes: e.memory.total_bytes, capacity_bytes: e.memory.capacity_bytes,
    with_headroom_bytes: e.memory.total_with_headroom_bytes,
    time_s: train ? train.time_s : null,
    throughput: inf ? inf.decode_tokens_per_s_total : null,
    cost_usd: train ? e.cost.usd_total : e.cost.usd_per_hour,
    watts: e.power.total_watts, warnings: e.warnings.map((w) => noteText(w)), reason: rec.rank_reason,
    caveats: e.warnings.filter((w) => kCaveats.has(w.code)).map((w) => noteText(w)),
    offer: offerText(e.cost), cost_local: localCost(e.cost, train ? e.cost.usd_total : e.cost.usd_per_hour),
    rank_code: rec.rank_code ?? null, calibrated: Boolean(e.calibration?.applied),
  };
}

// Words for why a row is where it is: the page's own for a known rank_code, else the engine's
// rank_reason (English).
export function rankText(rec) {
  return rec.rank_code && has(`rank_${rec.rank_code}`) ? t(`rank_${rec.rank_code}`) : (rec.rank_reason ?? '');
}

// Memory as "used of capacity (used share)" and the headroom on top of it, separately: the
// share is total_bytes / capacity_bytes; fits compares total_with_headroom_bytes with capacity.
export function memoryFigures(m) {
  const headroomBytes = m.total_with_headroom_bytes - m.total_bytes;
  const headroom = Number.isFinite(m.headroom) ? m.headroom
    : m.total_bytes > 0 ? headroomBytes / m.total_bytes : 0;
  const usedPct = Math.round((100 * m.total_bytes) / m.capacity_bytes);
  return {
    usedPct, headroom,
    used: t('mem_used', fmt.gib(m.total_bytes), fmt.gib(m.capacity_bytes), usedPct),
    headroom_line: t('headroom_line', fmt.gib(headroomBytes), Math.round(headroom * 1000) / 10,
      fmt.gib(m.total_with_headroom_bytes), m.fits ? t('fits') : t('not_fits')),
  };
}

// A lever's name: the page's words for its code, else the request field it changes.
export function leverName(l) {
  if (has(`lever_${l.code}`)) return t(`lever_${l.code}`);
  const change = l.change ?? l;
  return `${change.path ? fieldName(change.path) : String(l.code ?? '').replace(/_/g, ' ')} = ${fmt.number(change.value)}`;
}

// One lever in a list: what it is, what it saves, what it costs in time, and the engine's words.
function leverLine(l, training) {
  const time = leverTime(l, training) || t('lever_time_unknown');
  return el('li', { dataset: { code: String(l.code ?? ''), fits: String(Boolean(l.fits)) } },
    `${leverName(l)}: ${t('lever_saves', fmt.gib(l.saved_bytes ?? 0))}, ${time}${l.cost && language() === 'en' ? ` — ${l.cost}` : ''}`);
}

// What a lever costs in time: the step time (training) or TPOT (serving) multiplier.
export function leverTime(l, training) {
  return Number.isFinite(l.time_factor) && l.time_factor > 0
    ? t(training ? 'lever_time' : 'lever_tpot', l.time_factor.toFixed(2)) : '';
}

// "On 1 card it fits with any one of: chunked loss (time ×1.05), ...": the levers that each
// make this card fit on fewer cards (the engine's almost_fits), or null.
export function almostFitsText(rec, training) {
  const a = rec.almost_fits;
  if (!a?.levers?.length) return null;
  const levers = a.levers.map((l) => {
    const time = leverTime(l, training);
    return time ? `${leverName(l)} (${time})` : leverName(l);
  });
  return t('almost_fits', a.count, levers.join(t('list_sep')));
}

// Pretraining without a deadline: the setup on the fewest cards, beside the fastest.
export function fewestCardsText(rec) {
  const f = rec.fewest_cards;
  if (!f || !Number.isFinite(f.count)) return null;
  const cost = f.usd_total == null ? '' : `, ${fmt.usd(f.usd_total)}`;
  return t('fewest_cards', f.count, rec.estimate.gpu.name, fmt.duration(f.time_s), cost);
}

const kSortKeys = {
  gpu: (s) => s.name, count: (s) => s.count, memory: (s) => s.memory_bytes,
  time: (s) => s.time_s ?? s.throughput, cost: (s) => s.cost_usd, power: (s) => s.watts,
};

// Rows without a value (a card with no price) go last in either direction.
export function sortRows(rows, key, dir) {
  if (!key) return rows;
  const f = kSortKeys[key];
  return [...rows].sort((a, b) => {
    const x = f(a.summary); const y = f(b.summary);
    if (x == null || y == null) return Number(x == null) - Number(y == null);
    return (x < y ? -1 : x > y ? 1 : 0) * dir;
  });
}

// first: the engine's first recommendation for the objective, wherever a sort puts it. The rows
// are described (patch.js h) and the table patched to match: a re-plan rewrites the figures that
// moved and keeps every node.
export function renderTable(tbody, rows, training, onDetail, first) {
  const heads = [...(tbody.closest('table')?.querySelectorAll('thead th') ?? [])].map((th) => th.textContent.trim());
  const described = [];
  for (const { rec, summary: s } of rows) {
    const e = rec.estimate;
    // A figure with its own likely range beneath it (validation residuals; accuracy.html):
    // a band is only ever drawn with the figure whose pointer it is under `bands`.
    const figure = (path, text) => {
      const b = e.bands?.[path];
      const band = b ? h('span', { className: 'band', dataset: { band: path, low: String(b.low), high: String(b.high) } },
        bandText(e, path)) : null;
      return [h('span', { dataset: { figure: path } }, text), band];
    };
    const m = memoryFigures(e.memory);
    // The meter is the used share; past 1 / (1 + headroom) the headroom no longer fits.
    const memory = h('td', {
      dataset: { col: 'memory', bytes: String(s.memory_bytes), capacity: String(s.capacity_bytes),
        withHeadroom: String(s.with_headroom_bytes) },
      title: explainTitle(e, '/memory/total_bytes'),
    }, ...figure('/memory/total_bytes', m.used),
    h('span', { className: 'headroom', dataset: { fits: String(e.memory.fits) } }, m.headroom_line),
    h('meter', { min: '0', max: '100', value: String(Math.min(m.usedPct, 100)),
      high: String(Math.round(100 / (1 + m.headroom))), 'aria-label': t('used_share', m.usedPct) }));
    const perReplica = s.replicas > 1 ? ` ${t('per_replica')}` : '';
    const inf = e.performance.inference;
    const time = training
      ? h('td', { dataset: { col: 'time', seconds: String(s.time_s) }, title: explainTitle(e, '/performance/training/time_s') },
        ...figure('/performance/training/time_s', fmt.duration(s.time_s)))
      : h('td', {
        dataset: { col: 'time', value: String(s.throughput) },
        title: explainTitle(e, '/performance/inference/decode_tokens_per_s_total'),
      }, ...figure('/performance/inference/decode_tokens_per_s_total', `${fmt.rate(s.throughput)}${perReplica}`),
      h('span', { className: 'latency' }, t('latency_line', fmt.ms(inf.ttft_ms, 0), fmt.ms(inf.tpot_ms, 1))));
    const costPath = training ? '/cost/usd_total' : '/cost/usd_per_hour';
    const button = h('button', { type: 'button', className: 'detail', 'aria-label': `${t('details')}: ${s.name}`,
      onclick: (ev) => onDetail(rec, ev.currentTarget) }, t('details'));
    const isFirst = rec === first;
    const almost = almostFitsText(rec, training);
    const fewest = isFirst ? fewestCardsText(rec) : null;
    const card = h('th', { scope: 'row' }, s.name,
      h('span', { className: 'rank', title: s.reason ?? '', dataset: { rankCode: rec.rank_code ?? '' } },
        isFirst ? `${t('first_choice')} · ${rankText(rec)}` : rankText(rec)),
      almost ? h('span', { className: 'almost', dataset: { count: String(rec.almost_fits.count) } }, almost) : null,
      fewest ? h('span', { className: 'fewest', dataset: { count: String(rec.fewest_cards.count) } }, fewest) : null,
      s.caveats.length ? h('span', { className: 'caveat' }, `⚠ ${s.caveats.join(' · ')}`) : null);
    const cells = [
      card,
      h('td', { dataset: { col: 'count' }, title: s.reason ?? '' }, String(s.count)),
      h('td', { dataset: { col: 'setup' } }, s.setup, s.calibrated
        ? h('span', { className: 'badge', dataset: { calibrated: 'true' }, title: t('calibration_banner_short') }, ` ${t('calibrated')}`)
        : null),
      memory, time,
      h('td', { dataset: { col: 'cost' }, title: [s.offer, explainTitle(e, costPath) || t('no_price')].filter(Boolean).join('\n') },
        (training || s.cost_usd == null ? fmt.usd(s.cost_usd) : `${fmt.usd(s.cost_usd)}${t('per_hour')}${perReplica}`) +
          (s.cost_local ? ` (${s.cost_local})` : '')),
      h('td', { dataset: { col: 'power' }, title: explainTitle(e, '/power/total_watts') }, `${fmt.watts(s.watts)}${perReplica}`),
      h('td', { dataset: { col: 'warnings' }, title: s.warnings.join('\n') }, s.warnings.length ? `⚠ ${s.warnings.length}` : ''),
      h('td', {}, button)];
    // Each cell names its column, for the phone layout's cards (style.css).
    for (let i = 1; i < cells.length; ++i) {
      if (cells[i].attrs[0]?.[0] === 'data-col') cells[i].attrs.push(['data-label', heads[i] ?? '']);
    }
    described.push(h('tr', { dataset: { gpu: s.gpu, fits: String(e.memory.fits), first: String(isFirst) } }, ...cells));
  }
  patchChildren(tbody, described);
}

// A rejected card: the page's words for its code where it has them (Chinese), else the
// engine's reason; the reason is the title either way.
// The numbers each code's words take, from the rejection's params; a code whose numbers are
// missing (or -1: not known) gets the engine's reason.
const kRejectArgs = {
  exceeds_memory: (p) => [p.max_gpus, fmt.gib(p.need_bytes), fmt.gib(p.capacity_bytes)],
  misses_deadline: (p) => [p.count, fmt.duration(p.fastest_central_s), fmt.duration(p.deadline_s),
    fmt.duration(p.fastest_s)],
  likely_range_crosses_deadline: (p) => [p.count, fmt.duration(p.fastest_central_s), fmt.duration(p.fastest_s),
    fmt.duration(p.deadline_s), p.max_gpus],
  batch_limits_data_parallel: (p) => [p.global_batch, p.count, fmt.duration(p.fastest_central_s),
    fmt.duration(p.deadline_s), fmt.duration(p.fastest_s)],
  exceeds_max_gpus: (p) => (p.replicas != null ? [p.replicas, p.per_replica, p.count, p.max_gpus]
    : [p.cards_needed_at_least, p.max_gpus]),
  misses_latency_targets: (p) => [p.tp, fmt.ms(p.ttft_ms, 0), fmt.ms(p.tpot_ms, 1)],
  over_budget: (p) => [fmt.usd(p.cheapest_usd), fmt.usd(p.budget_usd)],
  needs_liquid_cooling: () => [],
  inference_only_card: () => [],
  engine_unsupported_on_card: () => [],
  stack_unsupported_on_card: () => [],
  node_power: (p) => [fmt.watts(p.node_watts), fmt.watts(p.limit_w), p.gpus_per_node],
};
const kRejectVariant = {
  exceeds_max_gpus: (p) => (p.replicas != null ? 'reject_exceeds_max_gpus_serving' : 'reject_exceeds_max_gpus'),
  over_budget: (p) => (p.cheapest_usd < 0 ? 'reject_unpriced' : 'reject_over_budget'),
  exceeds_memory: (p) => (p.need_bytes < 0 ? 'reject_exceeds_memory_unknown' : 'reject_exceeds_memory'),
};

export function rejectionText(r) {
  const reason = r.reason ?? r.message ?? '';
  const p = r.params ?? {};
  const key = kRejectVariant[r.code]?.(p) ?? `reject_${r.code}`;
  const args = has(key, true) ? kRejectArgs[r.code]?.(p) : null;
  const known = args && args.every((a) => a != null && !(typeof a === 'number' && !Number.isFinite(a)));
  return `${r.gpu}: ${known ? t(key, ...args) : reason}`;
}

// Wait or switch (plan's wait_or_switch): the verdict and each card's queue, run and finish;
// nameOf(id) gives a card's name: people read cards, not ids.
export function renderWait(section, w, nameOf = (id) => id) {
  section.hidden = !w;
  if (!w) return;
  const verdict = section.querySelector('#wait-verdict');
  verdict.textContent = verdictText(w, nameOf);
  verdict.title = w.verdict?.message ?? '';
  section.querySelector('tbody').replaceChildren(...w.options.map((o) => el('tr',
    { dataset: { gpu: o.gpu, first: String(o.gpu === w.first_to_finish) } },
    el('th', { scope: 'row' }, nameOf(o.gpu)), el('td', {}, String(o.count)),
    el('td', { dataset: { seconds: String(o.wait_s) } }, fmt.duration(o.wait_s)),
    el('td', { dataset: { seconds: String(o.run_s) } }, fmt.duration(o.run_s)),
    el('td', { dataset: { seconds: String(o.finish_s) } }, fmt.duration(o.finish_s)),
    el('td', {}, fmt.usd(o.usd_total)))));
}

// An engine note's own message (English, with its sources and names) stays the item's title.
export function renderList(ul, items, text) {
  morphChildren(ul, el('ul', {}, ...items.map((i) => el('li', i?.code ? { title: i.message ?? '', dataset: { code: i.code } } : {}, text(i)))));
  ul.parentElement.hidden = items.length === 0;
}

// The detail view's almost-fit levers: each one, what it saves, and what it costs in time.
function renderAlmostFits(section, rec, training) {
  const a = rec.almost_fits;
  const box = section.querySelector('#almost-fits-box');
  box.hidden = !a?.levers?.length;
  if (box.hidden) return;
  box.querySelector('#almost-fits-summary').textContent = t('almost_fits_summary', a.count, rec.estimate.gpu.name,
    fmt.gib(a.total_with_headroom_bytes), fmt.gib(a.capacity_bytes));
  box.querySelector('#almost-fits').replaceChildren(...a.levers.map((l) => leverLine(l, training)));
}

const kParts = ['weights', 'gradients', 'optimizer_states', 'activations', 'kv_cache', 'buffers', 'runtime'];

export function renderDetail(section, rec) {
  const e = rec.estimate;
  const m = e.memory;
  const mf = memoryFigures(m);
  section.querySelector('#detail-title').textContent = `${rec.count} × ${e.gpu.name} — ${mf.used}`;
  const headroom = section.querySelector('#detail-headroom');
  headroom.textContent = mf.headroom_line;
  headroom.dataset.fits = String(m.fits);
  renderAlmostFits(section, rec, Boolean(e.performance.training));
  const fw = e.framework;
  const line = section.querySelector('#detail-framework');
  line.hidden = fw?.kv_pool_bytes == null;
  if (!line.hidden) {
    line.textContent = t('framework_line', fw.name, fmt.gib(fw.engine_bytes), fmt.gib(fw.kv_pool_bytes),
      fw.kv_pool_tokens.toLocaleString('en'), fw.kv_pool_sequences.toLocaleString('en'),
      fw.max_seqs ? t('framework_seqs', fw.max_seqs) : '');
    line.title = ['/framework/engine_bytes', '/framework/kv_pool_bytes', '/framework/kv_pool_tokens']
      .map((p) => explainTitle(e, p)).join('\n\n');
  }
  const chart = section.querySelector('#memory-chart');
  chart.replaceChildren();
  for (const part of kParts) {
    const bytes = m.per_gpu_bytes[part] ?? 0;
    const bar = el('span', { className: `bar part-${part}` });
    bar.style.width = `${Math.min(100, (100 * bytes) / m.capacity_bytes)}%`;
    chart.append(el('div', { className: 'chart-row', title: explainTitle(e, `/memory/per_gpu_bytes/${part}`) },
      el('span', { className: 'chart-label', dataset: { part } }, t(`part_${part}`)), el('span', { className: 'chart-track' }, bar),
      el('span', { className: 'chart-value' }, fmt.gib(bytes))));
  }
  const levers = section.querySelector('#levers');
  const training = Boolean(e.performance.training);
  // Where no single lever fits, the engine's combinations of two or three that do.
  const combos = (e.lever_combinations ?? []).map((c) => el('li', { dataset: { code: 'combination', fits: 'true' } },
    t('lever_together', c.levers.map((l) => leverName(l)).join(' + '), fmt.gib(c.total_with_headroom_bytes),
      leverTime(c, training) || t('lever_time_unknown'))));
  levers.replaceChildren(...(e.levers ?? []).map((l) => leverLine(l, training)), ...combos);
  levers.parentElement.hidden = !levers.children.length;
  const explain = section.querySelector('#explain');
  explain.replaceChildren();
  for (const [path, x] of Object.entries(e.explain ?? {})) {
    const value = pointer(e, path);
    const body = el('div', { className: 'explain-body' },
      el('p', {}, el('strong', { text: `${t('formula')}: ` }), formulaText(path, x)));
    const b = e.bands?.[path];
    if (b) body.append(el('p', { text: `${t('likely')}: ${bandText(e, path)} — ${b.basis}` }));
    if (x.assumptions?.length) {
      body.append(el('p', { text: `${t('assumptions')}:` }),
        el('ul', {}, ...x.assumptions.map((a) => el('li', { text: a }))));
    }
    const inputs = Object.entries(x.inputs ?? {});
    if (inputs.length) {
      body.append(el('p', { text: `${t('inputs')}: ${inputs.map(([k, v]) => `${inputName(k)} = ${fmt.number(v)}`).join(t('list_sep'))}` }));
    }
    explain.append(el('details', { dataset: { path } },
      el('summary', { text: t('explain_summary', pointerName(path), pointerValue(path, value)) }), body));
  }
  section.hidden = false;
}

// A cell starting with = + @, a tab or CR would run as a formula in a spreadsheet: a quote
// disarms it. A leading '-' does too, unless the cell is a plain negative number, which stays
// a number.
export function csvCell(v) {
  let c = String(v ?? '');
  const negativeNumber = /^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(c);
  if (/^[=+@\t\r]/.test(c) || (c.startsWith('-') && !negativeNumber)) c = `'${c}`;
  return /[",\n\r]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c;
}

function escapeHtml(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Exports for wikis that forbid iframes: same columns as the table, raw numbers in CSV/JSON,
// headers in the page's language; above the table, its context: the model,
// the workload, the six lines of requirements, the catalog and engine versions and the share
// link. context: { model, workload, requirements: [[label, value]], engineVersion, link }.
// JSON keeps stable machine keys whatever the language.
export const kExportColumns = ['card', 'cards', 'setup', 'memory_gib_per_card', 'capacity_gib', 'time_h',
  'decode_tokens_per_s', 'cost_usd', 'power_w'];

export function exportPlan(format, summaries, request, catalogVersion, context = {}) {
  const training = summaries.every((s) => s.time_s != null);
  const head = kExportColumns.map((c) => t(c === 'cost_usd' ? (training ? 'exp_cost_usd_total' : 'exp_cost_usd_per_hour') : `exp_${c}`));
  const rows = summaries.map((s) => [s.name, s.count, s.setup, (s.memory_bytes / GiB).toFixed(2),
    (s.capacity_bytes / GiB).toFixed(0), s.time_s == null ? '' : (s.time_s / 3600).toFixed(2),
    s.throughput == null ? '' : s.throughput.toFixed(0), s.cost_usd == null ? '' : s.cost_usd.toFixed(2), Math.round(s.watts)]);
  const lines = [
    [t('exp_model'), context.model ?? ''], [t('exp_workload'), context.workload ?? ''],
    ...(context.requirements ?? []),
    [t('catalog_version'), catalogVersion ?? ''], [t('exp_engine_version'), context.engineVersion ?? ''],
    [t('exp_link'), context.link ?? ''],
  ].filter(([, v]) => v !== '' && v != null);
  if (format === 'json') {
    return JSON.stringify({
      language: language(), model: context.model ?? null, workload: context.workload ?? null,
      requirements: (context.requirements ?? []).map(([label, value]) => ({ label, value })),
      catalog_version: catalogVersion, engine_version: context.engineVersion ?? null, link: context.link ?? null,
      request, columns: kExportColumns.map((key, i) => ({ key: key === 'cost_usd' ? (training ? 'cost_usd_total' : 'cost_usd_per_hour') : key, label: head[i] })),
      recommendations: summaries,
    }, null, 2);
  }
  return exportTable(format, head, rows, null, { title: t('exp_title'), lines });
}

// One table as Markdown, HTML or CSV (every cell escaped for its format), or `json` as JSON;
// context ({ title, lines: [[label, value]] }) goes above it: a heading and a list, or in CSV
// leading rows whose first cell starts with '#', then an empty row.
export function exportTable(format, head, rows, json, context = null) {
  if (format === 'json') return JSON.stringify(json, null, 2);
  const lines = context?.lines ?? [];
  if (format === 'csv') {
    const lead = context ? [[`# ${context.title}`], ...lines.map(([k, v]) => [`# ${k}`, v]), []] : [];
    return [...lead, head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n');
  }
  if (format === 'html') {
    const tr = (cells, tag) => `<tr>${cells.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
    const cell = (k, v) => (/^https?:\/\//.test(v) ? `<a href="${escapeHtml(v)}">${escapeHtml(v)}</a>` : escapeHtml(v));
    const lead = context ? `<h2>${escapeHtml(context.title)}</h2>\n<dl>\n${lines.map(([k, v]) =>
      `<dt>${escapeHtml(k)}</dt><dd>${cell(k, String(v))}</dd>`).join('\n')}\n</dl>\n` : '';
    return `${lead}<table>\n<thead>${tr(head, 'th')}</thead>\n<tbody>\n${rows.map((r) => tr(r, 'td')).join('\n')}\n</tbody>\n</table>`;
  }
  // Markdown renders inline HTML, so markup is escaped too, not only the cell separator.
  const mdCell = (c) => String(c ?? '').replace(/[&<>]/g, (x) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[x])
    .replace(/[|[\]\\`*_!]/g, (x) => `\\${x}`).replace(/\s*[\r\n]+\s*/g, ' ');
  const md = (cells) => `| ${cells.map(mdCell).join(' | ')} |`;
  // A link stays as it is (an autolink): escaping its # or _ would break it.
  const mdValue = (v) => (/^https?:\/\//.test(v) ? `<${String(v).replace(/[<>\s]/g, encodeURIComponent)}>` : mdCell(v));
  const lead = context ? [`## ${mdCell(context.title)}`, '', ...lines.map(([k, v]) => `- **${mdCell(k)}**: ${mdValue(String(v))}`), ''] : [];
  return [...lead, md(head), md(head.map(() => '---')), ...rows.map(md)].join('\n');
}

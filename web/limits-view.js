// @ts-check
// The detail view's reverse questions: what gpuplan limits answers for the
// setup on show, as a list; every figure is the engine's, its formula in the item's title.
import { el, errorLine } from './render.js';
import { t } from './i18n.js';

const n = (v) => Number(v).toLocaleString('en');

export function renderLimits(ul, text, count) {
  const envelope = JSON.parse(text);
  if (!envelope.ok) {
    ul.replaceChildren(...envelope.errors.map((e) => el('li', { text: errorLine(e) })));
    return;
  }
  const r = envelope.result;
  const l = r.limits;
  const w = r.request_normalized.workload;
  const item = (key, label) => el('li', { dataset: { key, value: String(l[key]) }, title: r.explain[key] ?? '' }, label);
  const items = w.kind === 'inference'
    ? [item('max_concurrency', t('limits_concurrency', n(l.max_concurrency), n(w.prompt_tokens + w.output_tokens))),
      item('max_context_tokens', t('limits_context', n(l.max_context_tokens), n(w.concurrency),
        l.context_at_model_limit ? t('limits_model_limit') : '')),
      item('max_context_alone', t('limits_context_alone', n(l.max_context_alone),
        l.context_alone_at_model_limit ? t('limits_model_limit') : ''))]
    : [item('max_micro_batch', t('limits_micro_batch', n(l.max_micro_batch), n(w.seq_len))),
      item('max_seq_len', t('limits_seq_len', n(l.max_seq_len), n(w.micro_batch),
        l.seq_len_at_model_limit ? t('limits_model_limit') : ''))];
  for (const m of r.largest_models) {
    const kind = t(`kind_${m.kind}`);
    items.push(el('li', { dataset: { key: `largest_${m.kind}`, value: m.model ?? '' } }, m.model
      ? t('limits_largest', kind, m.name, n(m.count), `TP${m.parallel.tp} PP${m.parallel.pp}` +
        (m.parallel.zero ? ` ZeRO-${m.parallel.zero}` : ''), m.weights)
      : t('limits_none', kind, n(count))));
  }
  ul.replaceChildren(...items);
}

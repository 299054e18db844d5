// @ts-check
// The detail view's launch command: gpuplan launch's answer as copyable text.
import { el, errorLine } from './render.js';
import { t } from './i18n.js';

export function renderLaunch(box, text) {
  const envelope = JSON.parse(text);
  if (!envelope.ok) {
    box.replaceChildren(...envelope.errors.map((e) => el('p', { text: errorLine(e) })));
    return;
  }
  const r = envelope.result;
  const copy = el('button', { type: 'button', text: t('launch_copy') });
  const pre = el('pre', { id: 'launch-command', dataset: { framework: r.framework } }, r.command);
  copy.addEventListener('click', () => navigator.clipboard?.writeText(r.command).catch(() => {}));
  box.replaceChildren(pre, copy,
    ...r.files.map((f) => el('details', { open: '' }, el('summary', { text: f.name }),
      el('pre', { dataset: { file: f.name } }, f.text))),
    el('ul', {}, ...r.notes.map((n) => el('li', { text: n }))));
}

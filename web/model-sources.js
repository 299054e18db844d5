// @ts-check
// The model's other sources, loaded on first use (the first load does not carry them): a
// Hugging Face id typed into the model field, read from huggingface.co by the browser (hub.js),
// and a local GGUF file's header (gguf-header.js). Either fills the pasted-config field (`hf`)
// and `hf_id`, so the request is a pasted config's and the share link carries what was read.
import { addWords, t } from './i18n.js';
import { kSourceWords } from './i18n-sources.js';
import { el } from './render.js';
import { state, suggestWeights } from './form.js';
import { hubIdOf } from './state.js';
import { describeConfig, readHubModel } from './hub.js';

addWords(kSourceWords);

/** @type {(sel: string) => any} An element of the page (its kind is the selector's). */
const $ = (sel) => document.querySelector(sel);
const failed = new Map();  // id -> the HubError it answered (not asked again until re-typed)
let reading = null;        // the id being read
let lastHub = null;        // what the Hub read gave beyond config.json (params, quantisation)
let lastGguf = null;       // the GGUF file read in this page
let message = null;        // {key, args}: the Hub's or the file's problem, or a read in progress
let hooks = null;

export function initSources(sourceHooks) {
  hooks = sourceHooks;
}

/// Reads the file the GGUF input holds (main.js calls it on each change of the input).
export function readChosenFile() {
  const file = $('#gguf-file').files?.[0];
  if (file) readGguf(file);
}

/// True when this id was asked and could not be read (the user may paste its config).
export const hasFailed = (id) => failed.has(id);

/// Reads `id` from the Hub unless it is being read or has failed; the page plans when done.
export async function readHub(id) {
  if (reading === id || failed.has(id)) { draw(); return; }
  reading = id;
  message = { key: 'hub_reading', args: [id] };
  draw();
  try {
    const m = await readHubModel(id);
    if (hubIdOf(state.model) !== id) return;  // the field moved on meanwhile
    state.hf = JSON.stringify(m.config, null, 2);
    state.hf_id = id;
    $('#hf').value = state.hf;
    lastHub = { ...m, weightsSet: suggestWeights(m.weights) ? m.weights : null };
    message = null;
  } catch (err) {
    if (!err.kind) throw err;
    failed.set(id, err);
    if (hubIdOf(state.model) !== id) return;
    message = { key: `hub_${err.kind}`, args: [id, err.message.match(/\((\d+)\)/)?.[1] ?? ''] };
    $('#hf-box').open = true;  // where the config can be pasted
    hooks.failed();
    draw();
    return;
  } finally {
    if (reading === id) reading = null;
  }
  hooks.schedule();
}

// Forgets a failure when the field no longer names that id (typing it again asks again), and
// the Hub's message once the field names no id or its config is there (pasted after it).
export function forget(model) {
  for (const id of failed.keys()) if (id !== model) failed.delete(id);
  if ((!hubIdOf(model) || state.hf_id === model) && message?.key?.startsWith('hub_')) message = null;
}

async function readGguf(file) {
  message = { key: 'gguf_reading', args: [file.name] };
  draw();
  try {
    const { readGgufFile, ggufPlan } = await import('./gguf-header.js');
    const header = await readGgufFile(file);
    const plan = ggufPlan(header);
    const source = `gguf:${file.name}`.slice(0, 160);
    lastGguf = { source, name: file.name, version: header.version, tensors: header.tensors.length, plan };
    state.hf = JSON.stringify(plan.config, null, 2);
    state.hf_id = source;
    state.model = source;
    state.kind = 'inference';
    state.framework = 'llama_cpp';
    for (const k of ['hf', 'model', 'kind', 'framework']) $(`#${k}`).value = state[k];
    suggestWeights(plan.weights, true);
    message = null;
    hooks.schedule();
  } catch (err) {
    message = { key: 'gguf_error', args: [file.name, err.message] };
    draw();
  }
}

const big = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(n >= 1e11 ? 0 : 2)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M`
  : String(Math.round(n)));

/// Draws what was read (or the problem) under the model field, in the page's language.
export function draw() {
  const status = $('#hub-status');
  status.hidden = !message;
  status.textContent = message ? t(message.key, ...message.args) : '';
  status.classList.toggle('error', Boolean(message && !/reading$/.test(message.key)));
  const lines = [];
  let config = null;
  try { config = state.hf.trim() ? JSON.parse(state.hf) : null; } catch { config = null; }
  const hub = hubIdOf(state.hf_id);
  const gguf = state.hf_id.startsWith('gguf:');
  if (config && typeof config === 'object' && (hub || gguf) && state.model === state.hf_id) {
    const d = describeConfig(config);
    const fresh = hub ? lastHub?.id === hub : lastGguf?.source === state.hf_id;
    const name = hub ?? config.name ?? state.hf_id.slice(5);
    lines.push(fresh ? (hub ? t('hub_read', name) : t('gguf_read', lastGguf.name, lastGguf.version,
      lastGguf.plan.arch, lastGguf.tensors)) : t(hub ? 'hub_from_link' : 'gguf_from_link', name));
    const facts = [];
    if (hub && fresh) {
      const p = lastHub.params;
      facts.push(!p ? t('hub_params_none') : p.exact ? t('hub_params', big(p.count))
        : t('hub_params_approx', big(p.count), config.torch_dtype ?? 'bf16'));
    }
    if (d.layers) facts.push(t('hub_layers', d.layers));
    facts.push(t(d.attention.key, ...d.attention.args));
    if (d.window) facts.push(t('hub_window', d.window));
    if (d.experts) facts.push(t('hub_experts', d.experts));
    if (d.context) facts.push(t('hub_context', Number(d.context).toLocaleString('en')));
    lines.push(facts.join(' · '));
    if (hub && fresh && lastHub.tensors) lines.push(t('hub_tensors', lastHub.tensors));
    if (hub && fresh && lastHub.quant) {
      lines.push([t('hub_quant', lastHub.quant), lastHub.weightsSet ? t('hub_weights', lastHub.weightsSet) : '']
        .filter(Boolean).join(' · '));
    }
    if (gguf && fresh) {
      const p = lastGguf.plan;
      lines.push(t('gguf_types', p.types.map(([type, n]) => `${type} × ${n}`).join(', ')));
      lines.push(p.exact ? t('gguf_exact', p.fileType, p.weights) : '');
      for (const n of p.notes) lines.push(t(n.key, ...n.args));
    }
  }
  const info = $('#hub-info');
  const shown = lines.filter(Boolean);
  info.hidden = shown.length === 0;
  info.replaceChildren(...shown.map((text) => el('li', { text })));
}

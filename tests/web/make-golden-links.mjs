// SPDX-License-Identifier: MIT
// Writes tests/web/golden-links.json: share links for a spread of form states, each with the
// request the page must build from it and the first recommendations `gpuplan plan` gave for it
// when the link was saved. Run only when a change is meant to move numbers (docs/changes.md).
// Usage: node tests/web/make-golden-links.mjs [path/to/gpuplan]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { buildRequest, calibrationState, decodeShare, encodeShare, kDefaults } from '../../web/state.js';

const cli = process.argv[2] || 'build/native-release/bin/gpuplan';
const engine = execFileSync(cli, ['--version']).toString().trim().replace(/^gpuplan /, '');
const catalog = JSON.parse(execFileSync(cli, ['catalog', '--gpus']).toString()).version;

const states = {
  'defaults (LoRA, Llama 3.1 8B)': {},
  'pretraining with a deadline and a budget': { kind: 'pretrain', model: 'llama-3.1-70b', seq_len: '8192',
    tokens: '2e10', deadline_h: '720', budget_usd: '5000000', max_gpus: '512' },
  'serving with latency targets': { kind: 'inference', model: 'qwen2.5-32b', prompt_tokens: '2048',
    output_tokens: '512', concurrency: '64', ttft_ms: '800', tpot_ms: '40', weights: 'fp8' },
  'QLoRA by architecture numbers, power-limited': { kind: 'qlora', weights: 'nf4', layers: '32', hidden: '4096',
    intermediate: '14336', heads: '32', kv_heads: '8', vocab: '128256', node_power_w: '6000', cooling: 'air' },
  'serving with the page\'s defaults': { kind: 'inference' },
  'a LoRA priced in the China market': { market: 'cn' },
  'calibrated full fine-tune': { kind: 'full_finetune', model: 'llama-3.2-1b', seq_len: '2048',
    ...calibrationState({ compute: 0.8, bandwidth: 1, memory: 1.1, interconnect: 0.5,
      measured_on: 'h100-sxm-80gb' }) },
};

const links = Object.entries(states).map(([name, diff]) => {
  const state = { ...kDefaults, ...diff };
  const request = buildRequest(state);
  const plan = JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(request) }).toString());
  const rows = plan.recommendations.slice(0, 3).map((r) => ({
    gpu: r.gpu, count: r.count, total_bytes: r.estimate.memory.total_bytes,
    time_s: r.estimate.performance.training?.time_s ?? null,
    decode_tokens_per_s_total: r.estimate.performance.inference?.decode_tokens_per_s_total ?? null,
  }));
  return { name, hash: `#${encodeShare(state, catalog, engine)}`, request, rows };
});
// A link from before links named their versions: the defaults alone, no cv, no ev.
links.push({ name: 'defaults, without versions', hash: '#1.e30', request: buildRequest({ ...kDefaults }),
  rows: links[0].rows });
// What an empty format-1 link means, field by field: a later change to a default shows here.
const formatDefaults = { 1: decodeShare('#1.e30').state };
writeFileSync('tests/web/golden-links.json', `${JSON.stringify({
  about: 'Share links saved with the request the page built from them and the first rows of ' +
    'gpuplan plan for it. Every later page must build the same request from each link; an ' +
    'engine and catalog of the same versions must give the same rows; other versions must ' +
    'make the page say so (docs/changes.md). Written by tests/web/make-golden-links.mjs.',
  engine_version: engine, catalog_version: catalog, format_defaults: formatDefaults, links }, null, 1)}\n`);
console.log(`golden links: ${links.length} (engine ${engine}, catalog ${catalog})`);

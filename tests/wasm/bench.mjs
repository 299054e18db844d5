// SPDX-License-Identifier: MIT
// Timing of the WebAssembly engine under Node (figures only, no thresholds):
//   node tests/wasm/bench.mjs build/wasm-release/wasm
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const dir = path.resolve(process.argv[2] ?? 'build/wasm-release/wasm');
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
// Timed: gpuplan-plan, the module the page plans with; both modules' sizes are printed.
for (const name of ['gpuplan', 'gpuplan-plan']) {
  const w = await readFile(path.join(dir, `${name}.wasm`));
  const j = await readFile(path.join(dir, `${name}.mjs`));
  console.log(`${name}: wasm ${w.length} B (gzip ${gzipSync(w, { level: 9 }).length} B), ` +
              `js ${j.length} B (gzip ${gzipSync(j, { level: 9 }).length} B)`);
}
const { default: createGpuplan } = await import(pathToFileURL(path.join(dir, 'gpuplan-plan.mjs')).href);
const wasm = await readFile(path.join(dir, 'gpuplan-plan.wasm'));
let t0 = performance.now();
const mod = await createGpuplan({ wasmBinary: wasm });
const init = performance.now() - t0;
const gpus = await readFile(path.join(root, 'catalog/gpus.json'), 'utf8');
const models = await readFile(path.join(root, 'catalog/models.json'), 'utf8');
t0 = performance.now();
mod.loadCatalog(gpus, models);
const load = performance.now() - t0;

function time(label, fn, runs) {
  fn();  // warm-up
  const start = performance.now();
  for (let i = 0; i < runs; ++i) fn();
  console.log(`${label.padEnd(44)} ${((performance.now() - start) / runs).toFixed(3)} ms`);
}

console.log(`${'instantiate'.padEnd(44)} ${init.toFixed(3)} ms`);
console.log(`${'load and validate the catalog'.padEnd(44)} ${load.toFixed(3)} ms`);
const estimate = JSON.stringify({ model: { preset: 'llama-3.1-8b' },
  workload: { kind: 'lora', micro_batch: 4, seq_len: 4096, grad_accum: 8 },
  parallel: { gpus: 8, zero: 2 }, gpu: 'h100-sxm-80gb' });
time('estimate: contract LoRA example (with levers)', () => mod.estimate(estimate), 200);
const plan = JSON.stringify({ model: { preset: 'llama-3.1-70b' },
  workload: { kind: 'pretrain', micro_batch: 1, seq_len: 8192, global_batch: 1024, tokens: 1e12 },
  constraints: { max_gpus: 1024 } });
time('plan: 70B pretraining, max_gpus 1024', () => mod.plan(plan), 10);
console.log(`${'  its answer'.padEnd(44)} ${(mod.plan(plan).length / 1000).toFixed(1)} KB`);
const serving = JSON.stringify({ model: { preset: 'llama-3.1-70b' },
  workload: { kind: 'inference', prompt_tokens: 2048, output_tokens: 512, concurrency: 256 },
  constraints: { max_gpus: 1024, ttft_ms: 2000, tpot_ms: 50 } });
time('plan: 70B serving, 256 users, max_gpus 1024', () => mod.plan(serving), 20);
console.log(`${'  its answer'.padEnd(44)} ${(mod.plan(serving).length / 1000).toFixed(1)} KB`);
// What the page re-plans on every keystroke with its default form (gpuplan_bench's
// BM_PlanPageDefault is the native figure).
const pageDefault = JSON.stringify({ model: { preset: 'llama-3.1-8b' },
  workload: { kind: 'lora', seq_len: 4096, tokens: 1e8 }, constraints: { max_gpus: 64 } });
time("plan: the page's default (LoRA, Llama 3.1 8B)", () => mod.plan(pageDefault), 20);
console.log(`${'  its answer'.padEnd(44)} ${(mod.plan(pageDefault).length / 1000).toFixed(1)} KB`);

// SPDX-License-Identifier: MIT
// The WebAssembly engine's plan time beside the native one, in the same minutes (figures only,
// no thresholds), for the aim of a WebAssembly plan within 1.3x of the native one. This
// machine's speed swings by 1.5x from one second to the next (a shared host), so each round
// times the native plan (Google Benchmark, wall time), then the same module under Node and in
// headless Chromium (the page's own browser), one after the other, and a ratio is taken within
// each round:
//   node tests/wasm/ratio.mjs [WASM_DIR=build/wasm-release/wasm] [BENCH=build/native-release/gpuplan_bench] [ROUNDS=5]
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from '../../scripts/serve.mjs';
import { launchChromium } from '../web/chromium.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const wasmDir = path.resolve(process.argv[2] ?? 'build/wasm-release/wasm');
const bench = path.resolve(process.argv[3] ?? 'build/native-release/gpuplan_bench');
const rounds = Number(process.argv[4] ?? 11);

// The requests of gpuplan_bench's BM_PlanPretrain/1, BM_PlanServing/1 and BM_PlanPageDefault/1,
// and how many plans make about a tenth of a second here.
const kinds = [
  { name: 'pretraining, 70B, max_gpus 1024', bench: 'BM_PlanPretrain/1', runs: 6,
    request: { model: { preset: 'llama-3.1-70b' },
      workload: { kind: 'pretrain', micro_batch: 1, seq_len: 8192, global_batch: 1024, tokens: 1e12 },
      constraints: { max_gpus: 1024 } } },
  { name: 'serving, 70B, 256 users', bench: 'BM_PlanServing/1', runs: 60,
    request: { model: { preset: 'llama-3.1-70b' },
      workload: { kind: 'inference', prompt_tokens: 2048, output_tokens: 512, concurrency: 256 },
      constraints: { max_gpus: 1024, ttft_ms: 2000, tpot_ms: 50 } } },
  { name: "the page's default (LoRA, 8B)", bench: 'BM_PlanPageDefault/1', runs: 60,
    request: { model: { preset: 'llama-3.1-8b' }, workload: { kind: 'lora', seq_len: 4096, tokens: 1e8 },
      constraints: { max_gpus: 64 } } },
];

function nativeMs(name) {
  const filter = `^${name}$`;
  const run = spawnSync(bench, [`--benchmark_filter=${filter}`, '--benchmark_min_time=0.1',
                                '--benchmark_format=json'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${bench}: ${run.stderr}`);
  const b = JSON.parse(run.stdout).benchmarks[0];
  return b.real_time * { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3 }[b.time_unit];
}

const gpus = await readFile(path.join(root, 'catalog/gpus.json'), 'utf8');
const models = await readFile(path.join(root, 'catalog/models.json'), 'utf8');

// Node: the module as bench.mjs loads it.
const { default: createGpuplan } =
  await import(pathToFileURL(path.join(wasmDir, 'gpuplan-plan.mjs')).href);
const mod = await createGpuplan({ wasmBinary: await readFile(path.join(wasmDir, 'gpuplan-plan.wasm')) });
mod.loadCatalog(gpus, models);
function nodeMs(request, runs) {
  const start = performance.now();
  for (let i = 0; i < runs; ++i) mod.plan(request);
  return (performance.now() - start) / runs;
}

// Chromium: the same files, served, imported by a page.
const { server, url } = await serve(wasmDir, { port: 0 });
const { context, close } = await launchChromium();
try {
  const page = await context.newPage();
  await page.goto(`${url}gpuplan-plan.mjs`);  // any address of the server: its origin
  await page.evaluate(async ([g, m]) => {
    const { default: create } = await import('./gpuplan-plan.mjs');
    globalThis.planner = await create();
    globalThis.planner.loadCatalog(g, m);
  }, [gpus, models]);
  const chromiumMs = (request, runs) => page.evaluate(([q, n]) => {
    const start = performance.now();
    for (let i = 0; i < n; ++i) globalThis.planner.plan(q);
    return (performance.now() - start) / n;
  }, [request, runs]);

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const min = (xs) => Math.min(...xs);
  console.log(`${rounds} rounds of a tenth of a second each: native, Node, Chromium. ms: the fastest round (median)`);
  console.log('ratio: of the fastest rounds; in brackets the median of the ratios within a round');
  console.log(`${'plan'.padEnd(34)} ${'native'.padStart(14)} ${'Node'.padStart(14)} ${'Chromium'.padStart(14)}` +
              `   Node/native     Chromium/native`);
  for (const k of kinds) {
    const q = JSON.stringify(k.request);
    // Warm-up, so both engines run optimised code (V8 tiers hot functions up as they run).
    nodeMs(q, k.runs);
    await chromiumMs(q, k.runs);
    const n = [], nd = [], ch = [];
    for (let r = 0; r < rounds; ++r) {
      n.push(nativeMs(k.bench));
      nd.push(nodeMs(q, k.runs));
      ch.push(await chromiumMs(q, k.runs));
    }
    const rn = nd.map((x, i) => x / n[i]);
    const rc = ch.map((x, i) => x / n[i]);
    const ms = (xs) => `${min(xs).toFixed(2)} (${median(xs).toFixed(2)})`.padStart(14);
    console.log(`${k.name.padEnd(34)} ${ms(n)} ${ms(nd)} ${ms(ch)}   ` +
                `${(min(nd) / min(n)).toFixed(2)}x (${median(rn).toFixed(2)}x)   ` +
                `${(min(ch) / min(n)).toFixed(2)}x (${median(rc).toFixed(2)}x)`);
  }
} finally {
  await close();
  server.close();
}

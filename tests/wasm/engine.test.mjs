// SPDX-License-Identifier: MIT
// The WebAssembly build answers as the native engine does: same envelope, same numbers, errors
// as values (never a thrown number), and many calls without corrupting the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const wasmDir = process.env.GPUPLAN_WASM_DIR;
const srcDir = process.env.GPUPLAN_SOURCE_DIR;
const nativeCli = process.env.GPUPLAN_NATIVE_CLI;  // set when a native build exists

// `name`: gpuplan (every call) or gpuplan-plan (the page's first download: catalog, plan,
// estimate, version).
async function loadEngine(name = 'gpuplan') {
  // Node has no fetch of a relative .wasm: hand the module its bytes.
  const { default: createGpuplan } = await import(pathToFileURL(path.join(wasmDir, `${name}.mjs`)).href);
  const wasmBinary = await readFile(path.join(wasmDir, `${name}.wasm`));
  const mod = await createGpuplan({ wasmBinary });
  const gpus = await readFile(path.join(srcDir, 'catalog/gpus.json'), 'utf8');
  const models = await readFile(path.join(srcDir, 'catalog/models.json'), 'utf8');
  const loaded = JSON.parse(mod.loadCatalog(gpus, models));
  assert.equal(loaded.ok, true, JSON.stringify(loaded).slice(0, 300));
  return mod;
}

const enginePromise = loadEngine();

test('the planning module answers plan and estimate as the complete one, and has no tools', async () => {
  const full = await enginePromise;
  const planner = await loadEngine('gpuplan-plan');
  assert.equal(planner.version(), full.version());
  for (const tool of ['script', 'calibrate', 'fleet', 'limits', 'launch', 'traffic']) {
    assert.equal(typeof full[tool], 'function', tool);
    assert.equal(planner[tool], undefined, tool);
  }
  const requests = [
    { model: { preset: 'llama-3.1-8b' }, workload: { kind: 'lora', seq_len: 4096 }, constraints: { max_gpus: 16 } },
    { model: { preset: 'llama-3.1-70b' }, framework: 'vllm',
      workload: { kind: 'inference', prompt_tokens: 2048, output_tokens: 512, concurrency: 64 },
      constraints: { max_gpus: 16, ttft_ms: 2000, tpot_ms: 50 } },
    { model: { preset: 'llama-3.1-8b' }, workload: { kind: 'lora', seq_len: -4 } },
  ];
  for (const r of requests) {
    const text = JSON.stringify(r);
    assert.equal(planner.plan(text), full.plan(text));
    assert.equal(planner.estimate(JSON.stringify({ ...r, gpu: 'h100-sxm-80gb' })),
                 full.estimate(JSON.stringify({ ...r, gpu: 'h100-sxm-80gb' })));
  }
});

test('estimate answers the contract example with the hand-worked weights', async () => {
  const mod = await enginePromise;
  const request = await readFile(path.join(srcDir, 'tests/cli/contract_example.json'), 'utf8');
  const env = JSON.parse(mod.estimate(request));
  assert.equal(env.ok, true);
  // Llama 3.1 8B in bf16 = 16,060,522,496 bytes + fp32 LoRA adapters 41,943,040 x 4.
  assert.equal(env.result.memory.per_gpu_bytes.weights, 16228294656);
});

test('the WebAssembly and native engines give the same answers', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  const cases = JSON.parse(await readFile(path.join(srcDir, 'tests/reference/memory_cases.json'), 'utf8'));
  for (const c of cases.cases.slice(0, 12)) {
    const text = JSON.stringify(c.request);
    const wasm = JSON.parse(mod.estimate(text)).result;
    const native = JSON.parse(execFileSync(nativeCli, ['estimate', '-'], { input: text }).toString());
    assert.deepEqual(wasm.memory, native.memory, c.id);
    assert.deepEqual(wasm.performance, native.performance, c.id);
  }
  const planRequest = JSON.stringify({ model: { preset: 'llama-3.1-8b' }, workload: { kind: 'qlora' },
                                       constraints: { max_gpus: 8 } });
  const wasmPlan = JSON.parse(mod.plan(planRequest)).result;
  const nativePlan = JSON.parse(execFileSync(nativeCli, ['plan', '-'], { input: planRequest }).toString());
  assert.deepEqual(wasmPlan.recommendations.map((r) => [r.gpu, r.count]),
                   nativePlan.recommendations.map((r) => [r.gpu, r.count]));
});

test('the measurement script is the same text from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  const text = await readFile(path.join(srcDir, 'tests/cli/contract_example.json'), 'utf8');
  const wasm = JSON.parse(mod.script(text));
  assert.equal(wasm.ok, true);
  assert.equal(wasm.result.filename, 'gpuplan_measure.py');
  const native = execFileSync(nativeCli, ['script', '-'], { input: text }).toString();
  assert.equal(wasm.result.script, native);
});

test('calibrate gives the same answer from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  const text = JSON.stringify({
    model: { preset: 'llama-3.2-1b' }, workload: { kind: 'full_finetune', micro_batch: 4, seq_len: 2048 },
    gpu: 'h100-sxm-80gb', parallel: { gpus: 4, zero: 2 },
    measured: { peak_allocated_bytes: 40e9, scaling: [{ gpus: 1, tokens_per_s: 50000 },
      { gpus: 2, tokens_per_s: 75000 }, { gpus: 4, tokens_per_s: 120000 }] },
  });
  const wasm = JSON.parse(mod.calibrate(text));
  assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
  const native = JSON.parse(execFileSync(nativeCli, ['calibrate', '-'], { input: text }).toString());
  assert.deepEqual(wasm.result, native);
});

test('fleet gives the same answer from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  const text = await readFile(path.join(srcDir, 'tests/cli/fleet_example.json'), 'utf8');
  const wasm = JSON.parse(mod.fleet(text));
  assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
  const native = JSON.parse(execFileSync(nativeCli, ['fleet', '-'], { input: text }).toString());
  assert.deepEqual(wasm.result, native);
});

test('every framework profile gives the same plan from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  for (const [kind, framework] of [['inference', 'vllm'], ['inference', 'sglang'], ['inference', 'tensorrt_llm'],
    ['inference', 'llama_cpp'], ['full_finetune', 'pytorch_fsdp'], ['full_finetune', 'deepspeed'],
    ['full_finetune', 'megatron']]) {
    const text = JSON.stringify({ model: { preset: 'llama-3.1-8b' }, workload: { kind }, framework,
      constraints: { gpus: ['h100-sxm-80gb', 'a100-sxm-80gb', 'rtx-4090-24gb'] } });
    const wasm = JSON.parse(mod.plan(text));
    assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
    const native = JSON.parse(execFileSync(nativeCli, ['plan', '-'], { input: text }).toString());
    assert.deepEqual(wasm.result.recommendations.map((r) => [r.gpu, r.count, r.estimate.framework]),
                     native.recommendations.map((r) => [r.gpu, r.count, r.estimate.framework]), framework);
  }
});

test('limits gives the same answer from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  for (const text of [
    '{"model": {"preset": "llama-3.1-8b"}, "gpu": "rtx-4090-24gb", "workload": {"kind": "inference"}}',
    '{"model": {"preset": "llama-3.1-8b"}, "gpu": "h100-sxm-80gb", "workload": {"kind": "lora"}, "parallel": {"gpus": 8}}']) {
    const wasm = JSON.parse(mod.limits(text));
    assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
    const native = JSON.parse(execFileSync(nativeCli, ['limits', '-'], { input: text }).toString());
    assert.deepEqual(wasm.result, native);
  }
});

test('launch gives the same commands from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  for (const framework of ['vllm', 'sglang', 'tensorrt_llm', 'llama_cpp', 'pytorch_fsdp', 'deepspeed', 'megatron']) {
    const serving = ['vllm', 'sglang', 'tensorrt_llm', 'llama_cpp'].includes(framework);
    const text = JSON.stringify({ model: { preset: 'llama-3.1-8b' }, gpu: 'h100-sxm-80gb', framework,
      workload: { kind: serving ? 'inference' : 'full_finetune' }, parallel: { gpus: serving ? 1 : 8 } });
    const wasm = JSON.parse(mod.launch(text));
    assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
    const native = JSON.parse(execFileSync(nativeCli, ['launch', '-'], { input: text }).toString());
    assert.deepEqual(wasm.result, native, framework);
  }
});

test('traffic gives the same answer from both engines', { skip: !nativeCli }, async () => {
  const mod = await enginePromise;
  const text = JSON.stringify({ model: { preset: 'llama-3.1-8b' }, workload: { kind: 'inference' },
    constraints: { tpot_ms: 50, gpus: ['h100-sxm-80gb', 'l40s-48gb'] },
    traffic: { requests_per_s: 20, prompt_tokens: { mean: 1500, p95: 6000 }, output_tokens: { mean: 300 } } });
  const wasm = JSON.parse(mod.traffic(text));
  assert.equal(wasm.ok, true, JSON.stringify(wasm).slice(0, 300));
  const native = JSON.parse(execFileSync(nativeCli, ['traffic', '-'], { input: text }).toString());
  assert.deepEqual(wasm.result, native);
});

test('bad input is an error envelope, never a thrown value, even thousands of times', async () => {
  const mod = await enginePromise;
  const deep = '['.repeat(100000);
  for (let i = 0; i < 2000; ++i) {
    for (const text of ['', '{', deep, '{"model": 3}', '{"workload": {"kind": "\u00ff"}}']) {
      const env = JSON.parse(mod.estimate(text));
      assert.equal(env.ok, false);
      assert.ok(env.errors.length > 0);
    }
  }
  // calibrate's own fields, hostile: NaN-like strings, wrong kinds, huge lists.
  const base = { model: { preset: 'llama-3.2-1b' }, workload: { kind: 'lora' }, gpu: 'l4-24gb' };
  for (const measured of [null, 'x', {}, { tokens_per_s: 'NaN' }, { tokens_per_s: -1 },
    { scaling: Array(100).fill({ gpus: 1, tokens_per_s: 1 }) }, { scaling: [{ gpus: 1e9, tokens_per_s: 1 }] },
    { tpot_ms: 5 }, { peak_allocated_bytes: 1e300 }]) {
    const env = JSON.parse(mod.calibrate(JSON.stringify({ ...base, measured })));
    assert.equal(env.ok, false, JSON.stringify(measured));
  }
  for (const calibration of [{ compute: 0 }, { memory: 'big' }, { interconnect: 1e9 }, []]) {
    const env = JSON.parse(mod.estimate(JSON.stringify({ ...base, calibration })));
    assert.equal(env.ok, false, JSON.stringify(calibration));
    assert.match(env.errors[0].path, /^\/calibration/);
  }
  // The module still answers after all that.
  const ok = JSON.parse(mod.estimate(JSON.stringify({ model: { preset: 'llama-3.1-8b' },
    workload: { kind: 'inference' }, gpu: 'h100-sxm-80gb' })));
  assert.equal(ok.ok, true);
  assert.match(mod.version(), /^\d+\.\d+\.\d+$/);
});

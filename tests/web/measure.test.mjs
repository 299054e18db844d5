// SPDX-License-Identifier: MIT
// The page's measurement form (web/measure.js) in Node: what it sends as `measured`, what it
// reads from the script's GPUPLAN_MEASUREMENT line, and the record rows. Literals by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildMeasured, parseScaling, ranOnFromScriptLine, recordsOf, valuesFromScriptLine } from '../../web/measure.js';
import { buildRequest, calibrationOf, calibrationState, decodeShare, encodeShare, InputError, kDefaults }
  from '../../web/state.js';

test('form values become the engine\'s measured object', () => {
  // 20 GiB = 20 x 2^30 = 21474836480 bytes; 93% -> 0.93.
  assert.deepEqual(buildMeasured({ alloc_gib: '20', reserved_gib: '', oom: false, tokens_per_s: '900',
    scaling: '1: 500, 2: 900', ttft_ms: '40', util_pct: '93', mem_pct: '', host_pct: '75' }, true), {
    peak_allocated_bytes: 21474836480, tokens_per_s: 900,
    scaling: [{ gpus: 1, tokens_per_s: 500 }, { gpus: 2, tokens_per_s: 900 }],
    gpu_utilization: 0.93, host_ram_share: 0.75,
  });
  // Serving keeps the latencies and drops training rates.
  assert.deepEqual(buildMeasured({ tokens_per_s: '900', ttft_ms: '40', tpot_ms: '12.5', oom: true }, false),
    { out_of_memory: true, ttft_ms: 40, tpot_ms: 12.5 });
});

test('bad measurement text names the field', () => {
  assert.throws(() => buildMeasured({ util_pct: '120' }, true), (e) => e instanceof InputError && e.field === 'util_pct');
  assert.throws(() => buildMeasured({ alloc_gib: 'lots' }, true), (e) => e.field === 'alloc_gib');
  assert.throws(() => parseScaling('2 cards fast'), (e) => e.field === 'scaling');
  assert.deepEqual(parseScaling(' 4=2400 ;8: 4.5e3\n'), [{ gpus: 4, tokens_per_s: 2400 }, { gpus: 8, tokens_per_s: 4500 }]);
});

test('the script line fills the form; other card counts join the speed-up curve', () => {
  const line = (m) => `step 12\nGPUPLAN_MEASUREMENT ${JSON.stringify({ settings: {}, measured: m })}\n`;
  // 10737418240 bytes = 10 GiB; utilisation 0.95 -> 95%.
  assert.deepEqual(valuesFromScriptLine(line({ gpus: 1, tokens_per_s: 1234.5, peak_allocated_bytes: 10737418240,
    gpu_utilization: 0.95 }), 1), { alloc_gib: '10', tokens_per_s: '1234.5', util_pct: '95' });
  // A 2-GPU run for a 1-GPU setup: a curve point, merged with what the field holds, sorted;
  // its memory is another layout's and stays out.
  assert.deepEqual(valuesFromScriptLine(line({ gpus: 2, tokens_per_s: 2000, peak_allocated_bytes: 1 }), 1,
    '4: 3500, 2: 1900'), { scaling: '2: 2000, 4: 3500' });
  // A one-GPU serving run of a two-GPU replica measured something else.
  assert.throws(() => valuesFromScriptLine(line({ gpus: 1, tpot_ms: 9, ttft_ms: 50 }), 2), (e) => e.field === 'paste');
  assert.throws(() => valuesFromScriptLine('no marker here'), (e) => e.field === 'paste');
  assert.throws(() => valuesFromScriptLine('GPUPLAN_MEASUREMENT {oops'), (e) => e.field === 'paste');
});

test('calibration factors round-trip through the state, the request and the share link', () => {
  const factors = { compute: 0.8, bandwidth: 1, memory: 1.25, interconnect: 0.5, allocator_slack: 0.1,
    measured_on: 'h100-sxm-80gb', measured_peak_bytes: 77073741824, measured_setup: '0cb226f46c21ebf7' };
  const state = { ...kDefaults, ...calibrationState(factors) };
  assert.deepEqual(buildRequest(state).calibration, factors);
  assert.equal(buildRequest({ ...kDefaults }).calibration, undefined);
  const back = decodeShare(`#${encodeShare(state, 'v1')}`).state;
  assert.deepEqual(calibrationOf(back), factors);
  // No allocator slack measured: the key stays out of the request.
  assert.deepEqual(calibrationOf({ ...kDefaults, ...calibrationState({ compute: 0.5 }) }), { compute: 0.5 });
  assert.throws(() => buildRequest({ ...kDefaults, cal_compute: 'x' }), (e) => e.field === 'cal_compute');
  // An edited link's bad factor has no field to fix it in: it is dropped, the good ones stay.
  const edited = decodeShare(`#${encodeShare({ ...state, cal_compute: 'x', cal_memory: '-2' }, 'v1')}`).state;
  assert.deepEqual(calibrationOf(edited), { bandwidth: 1, interconnect: 0.5, allocator_slack: 0.1,
    measured_on: 'h100-sxm-80gb', measured_peak_bytes: 77073741824, measured_setup: '0cb226f46c21ebf7' });
  // The setup a measured peak is for is text (a fingerprint), never a number.
  assert.equal(calibrationOf({ ...kDefaults, cal_peak: '7e10', cal_setup: '00ff' }).measured_setup, '00ff');
});

test('one record row per compared quantity', () => {
  const result = {
    request_normalized: { model: { preset: 'llama-3.2-1b' }, workload: { kind: 'lora' }, gpu: 'l4-24gb', parallel: { gpus: 1 } },
    comparisons: [
      { quantity: 'peak_allocated_bytes', estimated: 11e9, measured: 10e9, error: 0.1, within_success_line: true, calibrated: 10e9 },
      { quantity: 'tokens_per_s@1', estimated: 1500, measured: 1000, error: 0.5, within_success_line: false, calibrated: 1000 },
    ],
    calibration: { compute: 0.6667, bandwidth: 1, memory: 0.9, interconnect: 1 },
  };
  const rows = recordsOf(result, { run: 3, at: '2026-11-30T12:00:00Z', label: 'a', ranOn: 'NVIDIA L4, torch 2.11.0' });
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[1], { run: 3, at: '2026-11-30T12:00:00Z', label: 'a', model: 'llama-3.2-1b', workload: 'lora',
    gpu: 'l4-24gb', gpus: 1, ran_on: 'NVIDIA L4, torch 2.11.0', quantity: 'tokens_per_s@1', estimated: 1500, measured: 1000, error_pct: 50,
    within_10pct: false, calibrated: 1000, compute: 0.6667, bandwidth: 1, memory: 0.9, interconnect: 1 });
});

test('a record keeps what the pasted run ran on', () => {
  // The script's record: environment {gpu, torch, cuda, transformers, peft} (null when absent).
  const record = { settings: {}, measured: { gpus: 1 }, environment: { gpu: 'NVIDIA H200', torch: '2.11.0+cu130',
    cuda: '13.0', transformers: '5.17.0', peft: null } };
  assert.equal(ranOnFromScriptLine(`log\nGPUPLAN_MEASUREMENT ${JSON.stringify(record)}\n`),
    'NVIDIA H200, torch 2.11.0+cu130, cuda 13.0, transformers 5.17.0');
  assert.equal(ranOnFromScriptLine('GPUPLAN_MEASUREMENT {"measured": {}}'), '');
  assert.equal(ranOnFromScriptLine('GPUPLAN_MEASUREMENT {oops'), '');
  assert.equal(ranOnFromScriptLine('nothing here'), '');
});

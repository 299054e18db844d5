// SPDX-License-Identifier: MIT
// The shipped catalog files against their JSON Schemas, with a real validator (ajv, draft
// 2020-12), and the schemas against bad entries they must reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const load = (rel) => JSON.parse(readFileSync(path.join(root, rel), 'utf8'));

function validator(schemaFile) {
  // strictRequired would refuse the memory_gib / memory_gb oneOf, whose branches only require.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  return ajv.compile(load(schemaFile));
}

function explain(validate) {
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('\n');
}

test('catalog/gpus.json matches gpus.schema.json', () => {
  const validate = validator('catalog/schema/gpus.schema.json');
  const ok = validate(load('catalog/gpus.json'));
  assert.ok(ok, explain(validate));
});

test('catalog/models.json matches models.schema.json', () => {
  const validate = validator('catalog/schema/models.schema.json');
  const ok = validate(load('catalog/models.json'));
  assert.ok(ok, explain(validate));
});

test('the gpu schema rejects what the engine rejects', () => {
  const validate = validator('catalog/schema/gpus.schema.json');
  const card = load('catalog/gpus.json').gpus[0];
  const doc = (c) => ({ schema_version: 1, catalog_version: 't', gpus: [c] });
  assert.ok(validate(doc(card)), explain(validate));
  const newFields = { ...card, fp6_dense_tflops: 4500, block_scaled: ['mxfp8', 'mxfp6', 'mxfp4', 'nvfp4'],
    inference_only: false, unified_memory: false };
  assert.ok(validate(doc(newFields)), explain(validate));
  const bad = [
    { ...card, colour: 'green' },                       // unknown field
    { ...card, memory_gb: 80 },                          // both memory units
    { ...card, mem_bandwidth_gb_per_s: -5 },             // out of physical range
    { ...card, id: 'H100 SXM' },                         // not kebab-case
    { ...card, vendor: 'acme' },                         // not a known vendor
    (({ board_power_w, ...rest }) => rest)(card),        // missing required figure
    (({ bf16_dense_tflops, fp16_dense_tflops, ...rest }) => rest)(card),  // no 16-bit figure
    { ...card, block_scaled: ['fp4'] },                  // not a block-scaled format
    { ...card, block_scaled: ['mxfp4', 'mxfp4'] },       // repeated
    { ...card, block_scaled: [] },                       // an empty list says nothing
    { ...card, inference_only: 'yes' },                  // a flag is a boolean
    { ...card, unified_memory: 1 },
    { ...card, fp6_dense_tflops: -1 },
  ];
  for (const c of bad) assert.equal(validate(doc(c)), false, JSON.stringify(c).slice(0, 80));
});

test('catalog/stacks.json matches stacks.schema.json, and the schema wants a source on every value', () => {
  const validate = validator('catalog/schema/stacks.schema.json');
  const doc = load('catalog/stacks.json');
  assert.ok(validate(doc), explain(validate));
  const vllm = doc.stacks.find((s) => s.id === 'vllm');
  const bad = [
    { ...vllm, policy: { ...vllm.policy, 'engine.memory_fraction': { value: 0.92 } } },            // no source
    { ...vllm, policy: { ...vllm.policy, 'engine.memory_fraction': { value: 1.5, source: vllm.policy['engine.memory_fraction'].source } } },  // not a share
    { ...vllm, policy: { ...vllm.policy, 'engine.speed_factor': { value: 1.2, source: 'a fitted factor' } } },  // not a policy value
    { ...vllm, policy: { ...vllm.policy, 'engine.kv_budget': { value: 'all_of_it', source: 'x'.repeat(20) } } },  // not a budget
    { ...vllm, notes: [] },                                                                      // no notes
    (({ serving, ...rest }) => rest)(vllm),                                                      // no kind
  ];
  for (const s of bad) {
    assert.equal(validate({ ...doc, stacks: [s] }), false, JSON.stringify(s).slice(0, 100));
  }
});

test('catalog/bands.json matches bands.schema.json; each band is one a figure can take', () => {
  const validate = validator('catalog/schema/bands.schema.json');
  const doc = load('catalog/bands.json');
  assert.ok(validate(doc), explain(validate));
  for (const b of doc.bands) assert.ok(b.low <= b.high, `${b.kind} ${b.framework}: low above high`);
  const one = doc.bands[0];
  for (const bad of [{ ...one, kind: 'speed' }, { ...one, low: -1 }, (({ cases, ...rest }) => rest)(one)]) {
    assert.equal(validate({ ...doc, bands: [bad] }), false, JSON.stringify(bad));
  }
});

test('catalog/formats.json matches formats.schema.json; every entry has its source', () => {
  const validate = validator('catalog/schema/formats.schema.json');
  const doc = load('catalog/formats.json');
  assert.ok(validate(doc), explain(validate));
  const nf4 = doc.weights.find((w) => w.name === 'nf4');
  for (const bad of [(({ source, ...rest }) => rest)(nf4), { ...nf4, storage_bytes: 3 },
    (({ default_group, ...rest }) => rest)(nf4), { ...nf4, speed: 2 }]) {
    assert.equal(validate({ ...doc, weights: [bad] }), false, JSON.stringify(bad).slice(0, 80));
  }
});

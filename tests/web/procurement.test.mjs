// SPDX-License-Identifier: MIT
// The procurement sheet from a real plan: the six lines, the derived parameters,
// the plan's first three options with the CLI's numbers, the three vendor questions and the
// three measurements, in both languages and formats, with hostile text escaped.
// Env: GPUPLAN_NATIVE_CLI (build/native-release/bin/gpuplan).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkName, procurementSheet, requirementLines } from '../../web/procurement.js';
import { buildRequest, kDefaults } from '../../web/state.js';

const cli = process.env.GPUPLAN_NATIVE_CLI || 'build/native-release/bin/gpuplan';
const state = { ...kDefaults, max_gpus: '8', deadline_h: '48' };
const plan = JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(buildRequest(state)) }).toString());
const gpus = new Map(JSON.parse(execFileSync(cli, ['catalog', '--gpus']).toString()).gpus.map((g) => [g.id, g]));
const args = { state, recs: plan.recommendations, gpus, link: 'https://example/#1.x', catalogVersion: 'c1',
  engineVersion: 'e1', date: '2026-11-30' };

test('the English Markdown sheet holds the six lines, the plan\'s options and the checklists', () => {
  const md = procurementSheet('md', { ...args, lang: 'en' });
  for (const heading of ['The six lines of requirements', 'Hardware parameters derived from the plan',
    'Recommended options', 'Three questions for the vendor', 'Three measurements on delivery']) {
    assert.match(md, new RegExp(`## ${heading}`), heading);
  }
  assert.match(md, /\*\*Purpose\*\*: LoRA fine-tuning/);
  assert.match(md, /llama-3\.1-8b; 4096-token sequences/);
  assert.match(md, /within 48 h/);
  // The plan's first three cards, by name, in order, with their counts.
  const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Card') && !l.startsWith('| ---'));
  assert.equal(rows.length, Math.min(3, plan.recommendations.length));
  rows.forEach((row, i) => {
    const rec = plan.recommendations[i];
    assert.ok(row.includes(gpus.get(rec.gpu).name.replace(/[|[\]\\`*_!#]/g, (x) => `\\${x}`)), row);
    assert.equal(row.split(' | ')[1], String(rec.count), row);
  });
  const need = plan.recommendations[0].estimate.memory.total_with_headroom_bytes / 2 ** 30;
  assert.match(md, new RegExp(`at least ${Math.ceil(need)} GiB`));
  assert.equal((md.match(/^\d\. /gm) ?? []).length, 6, 'three questions and three measurements');
  assert.match(md, /Made by gpuplan e1 \(catalog c1\) on 2026-11-30\. Plan: <https:\/\/example\/#1\.x>/);
  // The first card's own link is named in the second question, in words (nvlink4: NVLink 4),
  // never by its catalog code.
  const link = gpus.get(plan.recommendations[0].gpu).intra_node?.kind;
  if (link) assert.ok(md.includes(`inside a server (${linkName(link)})`), link);
  assert.doesNotMatch(md, /air_or_liquid|infinity_fabric|nvlink\d|share_off_peak|keep_separate/);
});

test('a team fleet, when planned, joins the sheet with its costs in the user\'s currency', () => {
  const fleet = JSON.parse(execFileSync(cli, ['fleet', 'tests/cli/fleet_example.json']).toString());
  const md = procurementSheet('md', { ...args, lang: 'en', fleet });
  assert.match(md, /## Team fleet \(all workloads together\)/);
  const first = fleet.options[0];
  assert.ok(md.includes(`| ${first.name} | ${first.owned_cards} |`), md.slice(md.indexOf('## Team fleet'), 900));
  assert.ok(md.includes(first.cost.currency));
  assert.ok(!procurementSheet('md', { ...args, lang: 'en' }).includes('Team fleet'));
});

test('the Chinese printable HTML sheet escapes every text', () => {
  const hostile = { ...args, state: { ...state, model: '<img src=x onerror=alert(1)>' } };
  const html = procurementSheet('html', { ...hostile, lang: 'zh-CN' });
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<html lang="zh-CN">/);
  assert.match(html, /需求六行/);
  assert.match(html, /问供应商的三个问题/);
  assert.ok(!html.includes('<img'), 'markup from the state reached the sheet');
  assert.ok(html.includes('&#60;img src=x onerror=alert(1)&#62;'));
  const md = procurementSheet('md', { ...hostile, lang: 'en' });
  assert.ok(!md.includes('<img') && md.includes('&lt;img'), 'Markdown renders inline HTML: it must be escaped');
});

test('the six lines name cooling and links in words in both languages, for the exports too', () => {
  const zh = requirementLines('zh-CN', { ...state, cooling: 'air', node_power_w: '10000' });
  assert.deepEqual(zh.map(([k]) => k), ['用途', '模型与上下文', '精度', '时长或延迟目标', '卡数或预算', '机房电力与散热']);
  assert.match(zh[5][1], /风冷/);
  assert.equal(requirementLines('en', { ...state, cooling: 'liquid' })[5][1], 'liquid');
  assert.equal(linkName('infinity_fabric'), 'AMD Infinity Fabric');
  assert.equal(linkName(undefined), 'PCIe');
  const sheet = procurementSheet('md', { ...args, lang: 'zh-CN' });
  assert.doesNotMatch(sheet, /[a-z]+_[a-z_]+/, 'a catalog or engine code reached the Chinese sheet');
});

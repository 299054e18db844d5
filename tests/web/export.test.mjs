// SPDX-License-Identifier: MIT
// The plan exports for wikis that forbid iframes (web/render.js exportPlan), in Node. The
// summary below is written by hand; the expected texts are worked from it in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportPlan } from '../../web/render.js';
import { loadLanguage, setLanguage } from '../../web/i18n.js';
import { requirementLines } from '../../web/procurement.js';
import { kDefaults } from '../../web/state.js';

const GiB = 2 ** 30;
// A card whose name needs escaping in every format: a comma, a quote, a pipe and markup.
const summary = {
  gpu: 'x', name: 'Card "A", <b>|</b>', count: 2, setup: 'TP2 DP1 · mb 1 × ga 1',
  memory_bytes: 40 * GiB, capacity_bytes: 80 * GiB, with_headroom_bytes: 48 * GiB,
  time_s: 5400, throughput: null, cost_usd: 12.5, watts: 1400.4, warnings: [], reason: 'r',
};
// Human headers in the page's language; the JSON keeps the machine keys.
const head = 'Card,Cards,Setup,Memory per card (GiB),Card memory (GiB),Time (h),Decode throughput (tokens/s),' +
  'Cost of the run (USD),Power (W)';
// The table without the context above it: from the header row on.
const table = (text, first) => text.split('\n').slice(text.split('\n').findIndex((l) => l.startsWith(first))).join('\n');

test('CSV quotes what needs quoting; numbers are raw (5400 s = 1.50 h, 40 GiB = 40.00)', () => {
  assert.equal(table(exportPlan('csv', [summary], {}, 'v'), 'Card,'),
    `${head}\n"Card ""A"", <b>|</b>",2,TP2 DP1 · mb 1 × ga 1,40.00,80,1.50,,12.50,1400`);
});

test('HTML escapes markup from the catalog', () => {
  const html = exportPlan('html', [summary], {}, 'v');
  assert.ok(html.includes('<td>Card &#34;A&#34;, &#60;b&#62;|&#60;/b&#62;</td>'), html);
  assert.equal((html.match(/<tr>/g) ?? []).length, 2);
});

test('Markdown escapes the pipe that would split a cell, and markup', () => {
  const md = table(exportPlan('md', [summary], {}, 'v'), '| Card |').split('\n');
  assert.equal(md.length, 3);
  assert.equal(md[2], '| Card "A", &lt;b&gt;\\|&lt;/b&gt; | 2 | TP2 DP1 · mb 1 × ga 1 | 40.00 | 80 | 1.50 |  | 12.50 | 1400 |');
});

test('JSON carries the request and the catalog version', () => {
  const j = JSON.parse(exportPlan('json', [summary], { gpu: 'x' }, '2026.11.1'));
  assert.equal(j.catalog_version, '2026.11.1');
  assert.deepEqual(j.request, { gpu: 'x' });
  assert.equal(j.recommendations[0].memory_bytes, 42949672960);  // 40 x 2^30
});

test('CSV disarms spreadsheet formulas; serving costs are labelled per hour', () => {
  const evil = { ...summary, name: '=HYPERLINK("http://x")', time_s: null, throughput: 1234.4 };
  const [header, row] = table(exportPlan('csv', [evil], {}, 'v'), 'Card,').split('\n');
  assert.ok(header.endsWith('Decode throughput (tokens/s),Cost per hour (USD),Power (W)'), header);
  // The quote prefix, then CSV's own quoting of the inner quotes.
  assert.ok(row.startsWith(`"'=HYPERLINK(""http://x"")",2,`), row);
  assert.ok(row.endsWith(',,1234,12.50,1400'), row);
});

test('Markdown cannot turn catalog text into a link, an image or a new row', () => {
  const evil = { ...summary, name: '![x](http://e/i.png) [a](b)\nnext' };
  const cell = table(exportPlan('md', [evil], {}, 'v'), '| Card |').split('\n')[2].split(' | ')[0];
  assert.equal(cell, '| \\!\\[x\\](http://e/i.png) \\[a\\](b) next');
});

test('CSV keeps negative numbers numeric and still disarms a leading minus that is a formula', async () => {
  const { csvCell } = await import('../../web/render.js');
  // A record's error of -12.5% and an exponent stay numbers a spreadsheet sums.
  assert.equal(csvCell(-12.5), '-12.5');
  assert.equal(csvCell('-3e-2'), '-3e-2');
  assert.equal(csvCell('-.5'), '-.5');
  // -1+1 or -A1 would be evaluated: quoted.
  assert.equal(csvCell('-1+1'), "'-1+1");
  assert.equal(csvCell('-A1'), "'-A1");
  assert.equal(csvCell('+1'), "'+1");
  assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
  assert.equal(csvCell('\tx'), "'\tx");
});

// The context above the table: model, workload, the six lines, the catalog
// and engine versions and the share link, in every format; in Chinese, Chinese words.
const link = 'https://gpuplan.example/?x#1.eyJr_a';
const context = (lang) => ({ model: 'Llama 3.1 8B', workload: 'LoRA: 1e8 tokens', engineVersion: '0.9.0',
  link, requirements: requirementLines(lang, { ...kDefaults, cooling: 'air' }) });

test('every export carries the model, workload, six lines, versions and link above the table', () => {
  const c = context('en');
  const md = exportPlan('md', [summary], {}, '2026.12.2', c);
  for (const line of ['- **Model**: Llama 3.1 8B', '- **Workload**: LoRA: 1e8 tokens', '- **Purpose**: LoRA fine-tuning',
    '- **Site power and cooling**: air', '- **Catalog version**: 2026.12.2', '- **Engine version**: 0.9.0',
    `- **Share link**: <${link}>`]) assert.ok(md.includes(line), `${line}\n${md}`);
  assert.ok(md.indexOf('**Share link**') < md.indexOf('| Card |'), 'the context is not above the table');
  const csv = exportPlan('csv', [summary], {}, '2026.12.2', c).split('\n');
  assert.equal(csv[0], '# gpuplan plan');
  assert.ok(csv.includes('# Model,Llama 3.1 8B'), csv.join('\n'));
  assert.ok(csv.includes('# Catalog version,2026.12.2'));
  assert.ok(csv.includes(`# Share link,${link}`));
  assert.equal(csv.filter((l) => l.startsWith('# ')).length, 6 + 6, 'title, model, workload, six lines, 2 versions, link');
  assert.equal(csv[csv.indexOf(head) - 1], '', 'an empty row between the context and the table');
  const html = exportPlan('html', [summary], {}, '2026.12.2', c);
  assert.ok(html.includes('<dt>Engine version</dt><dd>0.9.0</dd>'), html);
  assert.ok(html.includes(`<a href="${link}">`), html);
  const j = JSON.parse(exportPlan('json', [summary], { gpu: 'x' }, '2026.12.2', c));
  assert.equal(j.model, 'Llama 3.1 8B');
  assert.equal(j.engine_version, '0.9.0');
  assert.equal(j.link, link);
  assert.equal(j.requirements.length, 6);
  assert.deepEqual(j.columns.map((x) => x.key), ['card', 'cards', 'setup', 'memory_gib_per_card', 'capacity_gib', 'time_h',
    'decode_tokens_per_s', 'cost_usd_total', 'power_w']);
});

test('in Chinese the headers and the context are Chinese; the JSON keys stay', async () => {
  assert.ok(await loadLanguage('zh-CN'));
  setLanguage('zh-CN');
  try {
    const c = context('zh-CN');
    const csv = exportPlan('csv', [summary], {}, 'v', c).split('\n');
    assert.equal(csv[0], '# gpuplan 规划方案');
    assert.ok(csv.includes('# 模型,Llama 3.1 8B'));
    assert.ok(csv.includes('# 用途,LoRA 微调'), csv.join('\n'));
    assert.ok(csv.includes('# 机房电力与散热,风冷'), csv.join('\n'));
    assert.ok(csv.includes('显卡,卡数,并行配置,每卡显存（GiB）,卡的显存（GiB）,时间（小时）,解码吞吐（token/秒）,整次费用（美元）,功耗（瓦）'),
      csv.join('\n'));
    const md = exportPlan('md', [summary], {}, 'v', c);
    assert.match(md, /^## gpuplan 规划方案$/m);
    assert.match(md, /\| 显卡 \| 卡数 \|/);
    assert.doesNotMatch(md, /memory_gib_per_card|cost_usd/);
    const j = JSON.parse(exportPlan('json', [summary], {}, 'v', c));
    assert.equal(j.language, 'zh-CN');
    assert.equal(j.columns[3].key, 'memory_gib_per_card');
    assert.equal(j.columns[3].label, '每卡显存（GiB）');
  } finally {
    setLanguage('en');
  }
});

// SPDX-License-Identifier: MIT
// The plan exports for wikis that forbid iframes (web/render.js exportPlan), in Node. The
// summary below is written by hand; the expected texts are worked from it in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportPlan } from '../../web/render.js';

const GiB = 2 ** 30;
// A card whose name needs escaping in every format: a comma, a quote, a pipe and markup.
const summary = {
  gpu: 'x', name: 'Card "A", <b>|</b>', count: 2, setup: 'TP2 DP1 · mb 1 × ga 1',
  memory_bytes: 40 * GiB, capacity_bytes: 80 * GiB, with_headroom_bytes: 48 * GiB,
  time_s: 5400, throughput: null, cost_usd: 12.5, watts: 1400.4, warnings: [], reason: 'r',
};
const head = 'card,cards,setup,memory_gib_per_card,capacity_gib,time_h,decode_tokens_per_s,cost_usd_total,power_w';

test('CSV quotes what needs quoting; numbers are raw (5400 s = 1.50 h, 40 GiB = 40.00)', () => {
  assert.equal(exportPlan('csv', [summary], {}, 'v'),
    `${head}\n"Card ""A"", <b>|</b>",2,TP2 DP1 · mb 1 × ga 1,40.00,80,1.50,,12.50,1400`);
});

test('HTML escapes markup from the catalog', () => {
  const html = exportPlan('html', [summary], {}, 'v');
  assert.ok(html.includes('<td>Card &#34;A&#34;, &#60;b&#62;|&#60;/b&#62;</td>'), html);
  assert.equal((html.match(/<tr>/g) ?? []).length, 2);
});

test('Markdown escapes the pipe that would split a cell, and markup', () => {
  const md = exportPlan('md', [summary], {}, 'v').split('\n');
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
  const [header, row] = exportPlan('csv', [evil], {}, 'v').split('\n');
  assert.ok(header.endsWith('decode_tokens_per_s,cost_usd_per_hour,power_w'), header);
  // The quote prefix, then CSV's own quoting of the inner quotes.
  assert.ok(row.startsWith(`"'=HYPERLINK(""http://x"")",2,`), row);
  assert.ok(row.endsWith(',,1234,12.50,1400'), row);
});

test('Markdown cannot turn catalog text into a link, an image or a new row', () => {
  const evil = { ...summary, name: '![x](http://e/i.png) [a](b)\nnext' };
  const cell = exportPlan('md', [evil], {}, 'v').split('\n')[2].split(' | ')[0];
  assert.equal(cell, '| \\!\\[x\\](http://e/i.png) \\[a\\](b) next');
});

test('CSV keeps negative numbers numeric and still disarms a leading minus that is a formula', async () => {
  const { csvCell } = await import('../../web/render.js');
  // A record's error of -12.5% and an exponent stay numbers a spreadsheet sums (issue #19 item 13).
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

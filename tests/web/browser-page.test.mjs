// SPDX-License-Identifier: MIT
// The page as a whole: hostile names and URLs stay text, the CSP holds, a phone and a desktop lay
// it out, Chinese all the way, exports in the page's language.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  assertPageMatchesCli,
  check,
  cli,
  cliPlan,
  context,
  kMaxGpus,
  kSeqLen,
  kSnake,
  kTestTimeout,
  outDir,
  page,
  planSeq,
  problems,
  readPage,
  requestText,
  setField,
  setLang,
  shownText,
  tableRows,
  url,
  waitPlanned,
  waitReady,
} from './harness.mjs';

// Hostile catalogs and URL state are shown as text, named as errors, and never stop
// the page; the CSP of netlify.toml is what the page is served with, and the browser enforces it.
test('hostile catalog names and URL state stay text; the page keeps working', { timeout: kTestTimeout }, () =>
  check('p-hostile', () => page, async () => {
  await page.goto(url);
  await waitReady(page);
  const bundled = JSON.parse(await readFile('catalog/gpus.json', 'utf8'));
  const evil = '<img src=x onerror="window.__pwned=1">';
  const hostile = { ...bundled, catalog_version: '<script>window.__pwned=1</script>',
    gpus: bundled.gpus.map((g, i) => (i === 0 ? { ...g, name: `${evil} ${g.name}` }
      : i === 1 ? { ...g, name: `${'\u202e'.repeat(3)}${'W'.repeat(180)}` } : g)) };
  let seq = await planSeq(page);
  await page.setInputFiles('#catalog-file', { name: `${evil}.json`, mimeType: 'application/json',
                                              buffer: Buffer.from(JSON.stringify(hostile)) });
  await page.waitForFunction(() => document.querySelector('#catalog-version').textContent.includes('onerror')
    || document.querySelector('#catalog-errors').textContent.trim(), null, { polling: 50 });
  // The engine accepts any text as a name (gpuplan catalog --catalog does too): it is data.
  assert.ok((await page.textContent('#catalog-version')).includes(evil),
    `the hostile catalog was refused: ${await page.textContent('#catalog-errors')}`);
  seq = await waitPlanned(page, seq);
  const bodyText = await page.textContent('body');
  assert.ok(bodyText.includes('<script>window.__pwned=1</script>'), 'the catalog version is not shown as text');
  // Nothing became markup: no element the page never makes, no handler ran.
  assert.equal(await page.locator('main img, main script, main iframe').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);

  const b64 = (text) => Buffer.from(text).toString('base64url');
  const hostileHashes = [
    ['#1.%%%', /damaged|format/],
    [`#1.${'A'.repeat(200000)}`, /damaged|holds no form state/],
    [`#1.${Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')}`, /damaged/],
    [`#7.${b64('{}')}`, /unknown share-link format/],
    [`#1.${b64(JSON.stringify({ model: evil, hf: '</textarea><script>window.__pwned=1</script>' }))}`, /config\.json|model/],
    [`#1.${b64(JSON.stringify({ kind: '<svg onload=window.__pwned=1>', seq_len: '1e400' }))}`, /kind|seq_len/],
  ];
  for (const [hash, expected] of hostileHashes) {
    await page.goto(`${url}?h=${hostileHashes.findIndex(([h]) => h === hash)}${hash}`);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.status), null,
                               { polling: 50, timeout: 30_000 });
    await page.waitForTimeout(200);
    const errors = await page.textContent('#errors');
    assert.match(errors, expected, `${hash.slice(0, 40)}: ${errors.slice(0, 200)}`);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, hash.slice(0, 40));
    assert.equal(await page.locator('main img, main script, main svg').count(), 0, hash.slice(0, 40));
  }
  // Still a working planner: a valid edit plans again.
  await page.goto(url);
  await waitReady(page);
  seq = await planSeq(page);
  await setField(page, kSeqLen, '2048');
  await waitPlanned(page, seq);
  await assertPageMatchesCli(page);
}));

test('the page is served with netlify.toml\'s CSP, and the browser enforces it', { timeout: kTestTimeout }, () =>
  check('q-csp', () => page, async () => {
  const { parse } = await import('smol-toml');
  const netlify = parse(await readFile('netlify.toml', 'utf8'));
  const csp = netlify.headers.find((h) => h.for === '/*').values['Content-Security-Policy'];
  const response = await page.goto(url);
  assert.equal(response.headers()['content-security-policy'], csp);
  await waitReady(page);
  const outcome = await page.evaluate(async () => {
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
    // Later, in a task of the page's own (code run by the test driver itself is exempt).
    const evalBlocked = await new Promise((ok) => setTimeout(() => {
      try { (0, eval)('1'); ok(false); } catch { ok(true); }
    }, 0));
    const styled = document.createElement('div');
    styled.setAttribute('style', 'color: rgb(1, 2, 3)');
    document.body.append(styled);
    await new Promise((ok) => setTimeout(ok, 100));
    return { inline: window.__inline, evalBlocked, violations, color: getComputedStyle(styled).color };
  });
  assert.equal(outcome.inline, undefined, 'an inline script ran');
  assert.ok(outcome.evalBlocked, 'eval ran');
  assert.notEqual(outcome.color, 'rgb(1, 2, 3)', 'an inline style applied');
  assert.ok(outcome.violations.some((d) => d.startsWith('script-src')), JSON.stringify(outcome.violations));
  // The CSP reports violations to the console by design: they are this test's evidence.
  problems.length = 0;
}));

// On a phone the recommendations are cards, the first
// within the first screen, each figure under its column's name; the other tables keep every
// header over its own column.
test('a phone shows recommendations as cards, the first on the first screen', { timeout: kTestTimeout }, async () => {
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await check('t-phone', () => phone, async () => {
    await phone.goto(`${url}#`);
    await waitReady(phone);
    const card = phone.locator('#results tbody tr').first();
    const box = await card.boundingBox();
    assert.ok(box && box.y >= 0 && box.y + box.height <= 844, `first card at ${JSON.stringify(box)}`);
    assert.ok(await card.locator('button.detail').isVisible());
    assert.equal(await phone.locator('#results thead').isVisible(), false);
    const labels = await card.locator('td[data-label]').evaluateAll((tds) => tds.map((td) => td.dataset.label));
    assert.ok(labels.length >= 4 && labels.every((l) => l.length > 0), labels.join('|'));
    // No table hides a header while its cells stay (the 640 px rule once did).
    const hidden = await phone.$$eval('table:not(#results) th', (ths) => ths
      .filter((th) => getComputedStyle(th).display === 'none').map((th) => th.closest('table').id));
    assert.deepEqual(hidden, []);
    for (const theme of ['light', 'dark']) {
      await phone.selectOption('#theme', theme);
      await phone.screenshot({ path: path.join(outDir, `t-phone-${theme}.png`), fullPage: false });
    }
    await phone.selectOption('#theme', 'auto');
  });
  await phone.close();
});

// On a desktop the six lines are two rows of three boxes of one height per
// row; screenshots of both themes for a person to look at.
test('desktop form: two rows of three, equal heights; both themes', { timeout: kTestTimeout }, () =>
  check('u-desktop-form', () => page, async () => {
  await page.goto(`${url}#`);
  await waitReady(page);
  const boxes = await page.$$eval('#form > fieldset', (fs) => fs.map((f) => {
    const r = f.getBoundingClientRect();
    return { top: Math.round(r.top), height: Math.round(r.height) };
  }));
  assert.equal(boxes.length, 6);
  const rowsOf = [boxes.slice(0, 3), boxes.slice(3)];
  for (const row of rowsOf) {
    assert.equal(new Set(row.map((b) => b.top)).size, 1, JSON.stringify(row));
    assert.equal(new Set(row.map((b) => b.height)).size, 1, JSON.stringify(row));
  }
  assert.ok(rowsOf[1][0].top > rowsOf[0][0].top);
  // A plan over the whole catalog draws its first 25 options; "Show all" draws every one the
  // engine gave (drawing a hundred rows was most of a re-plan).
  const total = cliPlan(await requestText(page)).recommendations.length;
  if (total > 25) {
    assert.equal((await tableRows(page)).length, 25);
    assert.match(await page.textContent('#show-all'), new RegExp(String(total)));
    await page.click('#show-all');
    assert.equal((await tableRows(page)).length, total);
    assert.equal(await page.isHidden('#show-all'), true);
  }
  for (const theme of ['light', 'dark']) {
    await page.selectOption('#theme', theme);
    await page.screenshot({ path: path.join(outDir, `u-desktop-${theme}.png`), fullPage: false });
  }
  await page.selectOption('#theme', 'auto');
}));

test('Chinese all the way: engine codes worded in both languages, pointers named, full-width digits read',
     { timeout: kTestTimeout }, () => check('zz-chinese', () => page, async () => {
  await page.goto(`${url}?zh=1`);
  await waitReady(page);
  let seq = await planSeq(page);
  // Pretraining with a queue: advice, rejections, warnings and a wait-or-switch verdict.
  await setField(page, '#kind', 'pretrain');
  await setField(page, '#model', 'llama-3.2-1b');
  await setField(page, '#tokens', '1e9');
  await setField(page, kMaxGpus, '8');
  seq = await waitPlanned(page, seq);
  let cli = cliPlan((await readPage(page)).text);
  const first = cli.recommendations[0].gpu;
  await setField(page, '#waits', `${first}: 2`);
  seq = await waitPlanned(page, seq);
  cli = cliPlan((await readPage(page)).text);
  assert.ok(cli.advice.length > 0 && cli.rejected.length > 0 && cli.wait_or_switch, 'the test needs advice, rejections, a verdict');
  await page.click('#results tbody tr:first-child button.detail');
  await page.waitForFunction(() => document.querySelectorAll('#explain summary').length > 5, null, { polling: 50 });
  for (const lang of ['en', 'zh-CN']) {
    await setLang(page, lang);
    await page.waitForFunction(() => document.querySelectorAll('#explain summary').length > 5, null, { polling: 50 });
    const text = await shownText(page);
    assert.deepEqual([...new Set(text.match(kSnake) ?? [])], [], `${lang}: engine codes on the page:\n${text}`);
    const summaries = await page.$$eval('#explain summary', (els) => els.map((e) => e.textContent));
    assert.ok(summaries.every((x) => !x.startsWith('/')), `${lang}: a pointer shown as a path: ${summaries.join(' | ')}`);
    const advice = await page.$$eval('#advice li', (lis) => lis.map((li) => li.textContent));
    assert.equal(advice.length, cli.advice.length);
    if (lang === 'en') {
      assert.ok(summaries.includes(`Weights = ${(cli.recommendations[0].estimate.memory.per_gpu_bytes.weights / 2 ** 30).toFixed(1)} GiB`),
        summaries.join(' | '));
      continue;
    }
    // Chinese words for every advice, the verdict and each rejection, with the engine's numbers.
    for (const a of advice) assert.match(a, /[\u4e00-\u9fff]/, a);
    assert.match(await page.textContent('#wait-verdict'), /[\u4e00-\u9fff]/);
    const rejected = await page.$$eval('#rejected li', (lis) => lis.map((li) => li.textContent));
    rejected.forEach((r, i) => assert.match(r, /[\u4e00-\u9fff]/, `${cli.rejected[i].code}: ${r}`));
    assert.ok(summaries.some((x) => x.startsWith('权重 = ')), summaries.join(' | '));
    assert.ok(summaries.some((x) => x.startsWith('训练时间 = ')), summaries.join(' | '));
    assert.ok(summaries.every((x) => /[\u4e00-\u9fff]/.test(x.split(' = ')[0])), summaries.join(' | '));
    // The headline formulas are Chinese; durations and setups read in Chinese.
    const timeFormula = await page.$eval('#explain details[data-path="/performance/training/time_s"] p', (p) => p.textContent);
    assert.equal(timeFormula, '公式: 训练总 token 数 ÷ 每秒 token 数');
    const time = await page.textContent('#results tbody tr:first-child td[data-col="time"]');
    assert.match(time, /\d (天|小时|分钟|秒)/, time);
    const setup = await page.textContent('#results tbody tr:first-child td[data-col="setup"]');
    assert.match(setup, /微批 \d+ × 累积 \d+/, setup);
  }
  await page.click('#detail-close');
  // Full-width digits (a Chinese IME) are numbers; a bad number is named in Chinese, no pointer.
  await setField(page, '#waits', '');
  seq = await waitPlanned(page, seq);
  await setField(page, kMaxGpus, '４');
  await setField(page, '#tokens', '２ｅ９'.replace('ｅ', 'e'));
  seq = await waitPlanned(page, seq);
  let { request } = await readPage(page);
  assert.equal(request.constraints.max_gpus, 4);
  assert.equal(request.workload.tokens, 2e9);
  await setField(page, '#tokens', '１．５e9');
  seq = await waitPlanned(page, seq);
  ({ request } = await readPage(page));
  assert.equal(request.workload.tokens, 1.5e9);
  await setField(page, '#tokens', 'abc');
  await page.waitForFunction(() => document.body.dataset.status === 'error', null, { polling: 50 });
  const errors = await page.innerText('#errors');
  assert.match(errors, /训练总 token 数 — 不是数字：“abc”/, errors);
  assert.doesNotMatch(errors, /\/workload|tokens:/, errors);
  await setField(page, '#tokens', '1e9');
  await waitPlanned(page, seq);
  await setLang(page, 'en');
}));

// The exports follow the page's language with human headers, and
// carry their context above the table (model, workload, six lines, versions, share link); the
// JSON keeps its machine keys; the procurement sheet names no catalog code.
test('exports in the page\'s language, with their context; the sheet names no code',
     { timeout: kTestTimeout }, () => check('zz-exports', () => page, async () => {
  await page.goto(`${url}?exports=1`);
  await waitReady(page);
  const exported = async (format) => {
    await page.selectOption('#export-format', format);
    await page.click('#export');
    await page.waitForFunction(() => document.querySelector('#export-out').value.length > 0, null, { polling: 50 });
    const v = await page.inputValue('#export-out');
    await page.evaluate(() => { document.querySelector('#export-out').value = ''; });
    return v;
  };
  const { catalogVersion, engineVersion } = await page.evaluate(async () => {
    const m = await import('./catalog-loader.js');
    return { catalogVersion: m.catalogVersion, engineVersion: m.engineVersion };
  });
  assert.ok(catalogVersion && engineVersion);
  let csv = (await exported('csv')).split('\n');
  assert.equal(csv[0], '# gpuplan plan');
  assert.ok(csv.includes('# Purpose,LoRA fine-tuning'), csv.join('\n'));
  assert.ok(csv.includes(`# Catalog version,${catalogVersion}`), csv.join('\n'));
  assert.ok(csv.includes(`# Engine version,${engineVersion}`), csv.join('\n'));
  assert.ok(csv.some((l) => l.startsWith('# Share link,http') && l.includes('#1.')), csv.join('\n'));
  assert.ok(csv.includes('Card,Cards,Setup,Memory per card (GiB),Card memory (GiB),Time (h),Decode throughput (tokens/s),' +
    'Cost of the run (USD),Power (W)'), csv.join('\n'));
  await setLang(page, 'zh-CN');
  csv = (await exported('csv')).split('\n');
  assert.equal(csv[0], '# gpuplan 规划方案');
  for (const lead of ['# 模型,', '# 负载,', '# 用途,LoRA 微调', '# 模型与上下文,', '# 精度,', '# 时长或延迟目标,', '# 卡数或预算,',
    '# 机房电力与散热,', `# 目录版本,${catalogVersion}`, `# 引擎版本,${engineVersion}`, '# 分享链接,http']) {
    assert.ok(csv.some((l) => l.startsWith(lead)), `${lead}\n${csv.join('\n')}`);
  }
  const header = csv.find((l) => l.startsWith('显卡,'));
  assert.equal(header, '显卡,卡数,并行配置,每卡显存（GiB）,卡的显存（GiB）,时间（小时）,解码吞吐（token/秒）,整次费用（美元）,功耗（瓦）');
  const row = csv[csv.indexOf(header) + 1];
  assert.match(row, /微批 \d+ × 累积 \d+/, row);
  const md = await exported('md');
  assert.match(md, /^## gpuplan 规划方案$/m);
  assert.match(md, /^- \*\*用途\*\*: LoRA 微调$/m);
  assert.match(md, /^\| 显卡 \| 卡数 \| 并行配置 \|/m);
  assert.doesNotMatch(md, /memory_gib_per_card|cost_usd|decode_tokens/);
  const html = await exported('html');
  assert.match(html, /<dt>引擎版本<\/dt><dd>/);
  assert.match(html, /<th>每卡显存（GiB）<\/th>/);
  const json = JSON.parse(await exported('json'));
  assert.equal(json.language, 'zh-CN');
  assert.equal(json.catalog_version, catalogVersion);
  assert.equal(json.engine_version, engineVersion);
  assert.match(json.link, /^http.*#1\./);
  assert.equal(json.requirements.length, 6);
  assert.equal(json.columns[0].key, 'card');
  assert.ok('memory_bytes' in json.recommendations[0]);
  // The procurement sheet: Chinese, and no catalog code (air_or_liquid, nvlink4, infinity_fabric).
  const sheet = await exported('sheet-md');
  assert.match(sheet, /^# GPU 采购需求单$/m);
  assert.doesNotMatch(sheet.replace(/<http[^>]*>/g, ''), kSnake);
  await setLang(page, 'en');
}));

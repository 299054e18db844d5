// Prints the page's budgets as figures, not pass/fail: first-load transfer
// (gzip), navigation to the first recommendation, re-plan after an input change (median: to
// the answer drawn in the DOM, and to the frame that shows it painted), and the engine's plan
// time in the page's worker. Run after scripts/build-site.sh:
//   node tests/web/budget.mjs [SITE_DIR=build/site]
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { serve } from '../../scripts/serve.mjs';
import { launchChromium } from './chromium.mjs';

const site = process.argv[2] ?? 'build/site';

async function files(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.push(...(e.isDirectory() ? await files(p) : [p]));
  }
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (name, value, aim) => console.log(`${name.padEnd(44)} ${value.padStart(12)}${aim ? `   aim ${aim}` : ''}`);

const { server, url } = await serve(site, { port: 0 });
const { context, close } = await launchChromium();
try {
  const page = await context.newPage();
  const fetched = new Set();
  // A folder's address is its index.html (the page itself).
  page.on('request', (r) => fetched.add(new URL(r.url()).pathname.replace(/\/$/, '/index.html')));
  const loads = [];
  for (let i = 0; i < 5; ++i) {
    await page.goto(`${url}?run=${i}`);
    await page.waitForSelector('body[data-status="ready"]', { timeout: 20000 });
    loads.push(Number(await page.evaluate(() => document.body.dataset.firstPlanAt)));
  }
  let gzip = 0;
  for (const f of await files(site)) {
    if (fetched.has(`/${relative(site, f)}`)) gzip += gzipSync(await readFile(f), { level: 9 }).length;
  }
  row('first-load transfer (gzip, files fetched)', `${(gzip / 1024).toFixed(0)} KB`, '<= 300 KB (#5), 270 KB (#18)');
  row('navigation to first recommendation (median)', `${median(loads).toFixed(0)} ms`, '<= 500 ms');

  const replans = [];
  const painted = [];
  const engine = [];
  for (let i = 0; i < 21; ++i) {
    const before = Number(await page.evaluate(() => document.body.dataset.planSeq));
    const t = await page.evaluate(async (n) => {
      const t0 = performance.now();
      const input = document.getElementById('seq_len');
      input.value = String(n);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const seq0 = Number(document.body.dataset.planSeq);
      // A MutationObserver fires as soon as the page marks the plan drawn (no frame wait).
      await new Promise((ok) => {
        const done = () => Number(document.body.dataset.planSeq) > seq0 &&
          document.body.dataset.status !== 'busy';
        const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); ok(); } });
        mo.observe(document.body, { attributes: true });
      });
      const drawn = performance.now() - t0;
      // And until the frame that shows it is laid out and painted: a task queued from the next
      // animation frame runs after that frame's rendering.
      await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
      return [drawn, performance.now() - t0];
    }, 2048 + 256 * i);
    replans.push(t[0]);
    painted.push(t[1]);
    engine.push(Number(await page.evaluate(() => document.body.dataset.planMs)));
    if (Number(await page.evaluate(() => document.body.dataset.planSeq)) <= before) throw new Error('no re-plan');
  }
  row('re-plan after an input change (median of 21)', `${median(replans).toFixed(1)} ms`, '<= 50 ms (#5), one frame: 16.7 ms (#18)');
  row('  and to the frame that shows it painted', `${median(painted).toFixed(1)} ms`, '');
  row('  of which the engine in the worker (median)', `${median(engine).toFixed(1)} ms`, 'within 1.5x native');
} finally {
  await close();
  server.close();
}

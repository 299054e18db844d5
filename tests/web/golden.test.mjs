// SPDX-License-Identifier: MIT
// Links that never rot: every saved share link must still make the request it made
// when it was saved, and an engine and catalog of the versions it names must still give the
// rows saved with it. A change that moves numbers moves a version (docs/changes.md), and the
// page then says so; the browser test checks that notice.
// Env: GPUPLAN_NATIVE_CLI (build/native-release/bin/gpuplan).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { buildRequest, decodeShare, kCurrentFormatDefaults, kDefaults } from '../../web/state.js';

const cli = process.env.GPUPLAN_NATIVE_CLI || 'build/native-release/bin/gpuplan';
const golden = JSON.parse(readFileSync(new URL('./golden-links.json', import.meta.url), 'utf8'));

test('the page\'s defaults are the current link format\'s (a change needs a new format)', () => {
  assert.deepEqual(kDefaults, kCurrentFormatDefaults);
});

test('every saved link builds the request it built when saved', () => {
  for (const link of golden.links) {
    const { state, catalogVersion, engineVersion } = decodeShare(link.hash);
    assert.deepEqual(buildRequest(state), link.request, link.name);
    if (link.hash === '#1.e30') continue;  // the link from before versions were named
    assert.equal(catalogVersion, golden.catalog_version, link.name);
    assert.equal(engineVersion, golden.engine_version, link.name);
  }
});

// A field added since the links were saved may join a format only with an empty default
// (absent from every older link, it changes nothing they meant): the saved fields must read
// as saved, and every later one as ''.
test('an empty link of each format still means the defaults it was saved with', () => {
  for (const [format, defaults] of Object.entries(golden.format_defaults)) {
    const empty = `#${format}.${Buffer.from('{}').toString('base64url')}`;
    const state = decodeShare(empty).state;
    const saved = Object.fromEntries(Object.keys(defaults).map((k) => [k, state[k]]));
    assert.deepEqual(saved, defaults, `format ${format}`);
    const later = Object.keys(state).filter((k) => !Object.hasOwn(defaults, k));
    assert.deepEqual(later.filter((k) => state[k] !== ''), [], `format ${format}: a later field with a default`);
  }
});

test('the same engine and catalog versions give the saved rows', () => {
  const engine = execFileSync(cli, ['--version']).toString().trim().replace(/^gpuplan /, '');
  const catalog = JSON.parse(execFileSync(cli, ['catalog', '--gpus']).toString()).version;
  assert.ok(engine !== golden.engine_version || catalog !== golden.catalog_version ||
    golden.links.every((l) => l.rows.length > 0), 'a saved link without rows checks nothing');
  if (engine !== golden.engine_version || catalog !== golden.catalog_version) {
    // A version moved: the page's notice covers these links (browser test); nothing to compare.
    return;
  }
  for (const link of golden.links) {
    const plan = JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(link.request) }).toString());
    const rows = plan.recommendations.slice(0, link.rows.length).map((r) => ({
      gpu: r.gpu, count: r.count, total_bytes: r.estimate.memory.total_bytes,
      time_s: r.estimate.performance.training?.time_s ?? null,
      decode_tokens_per_s_total: r.estimate.performance.inference?.decode_tokens_per_s_total ?? null,
    }));
    assert.deepEqual(rows, link.rows, `${link.name}: numbers moved without a version change ` +
      '(move the engine or catalog version, note it in docs/changes.md, regenerate the links)');
  }
});

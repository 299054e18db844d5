// SPDX-License-Identifier: MIT
// Debian's Chromium, headless, through playwright-core (which never downloads a browser), with
// a throw-away profile (launchPersistentContext on a temporary folder: launch() rejects a
// --user-data-dir in args) and the flags that keep it off the network.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const kArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/// Answers {context, close}; close() also removes the profile. CHROMIUM overrides the path.
export async function launchChromium(options = {}) {
  const profile = await mkdtemp(path.join(tmpdir(), 'gpuplan-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: kArgs,
    ...options,
  });
  const close = async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  };
  return { context, close };
}

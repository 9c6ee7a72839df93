/**
 * Debian's Chromium, driven by playwright-core, for the tests of the settings page. Never a browser
 * downloaded for the tests: the machine's own, as a user of the Homebridge UI would have.
 */
import { describe, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM ?? '/usr/bin/chromium';

const INSTALL_HINT = 'install it with `apt-get install chromium` (CI does so in .ci/run)';

/**
 * Without Chromium the browser tests cannot run: on a developer's machine they are skipped, under
 * the name of a test that says why; on CI (CI is set) that same test fails, so a missing browser is
 * never mistaken for a pass.
 */
export function describeWithChromium(title: string, tests: () => void): void {
  if (existsSync(CHROMIUM_PATH)) {
    describe(title, tests);
  } else if (process.env.CI !== undefined) {
    describe(title, () => {
      it(`needs Chromium at ${CHROMIUM_PATH}`, () => {
        throw new Error(`No Chromium at ${CHROMIUM_PATH}: ${INSTALL_HINT}, or set CHROMIUM to its path`);
      });
    });
  } else {
    const why = `no Chromium at ${CHROMIUM_PATH}; ${INSTALL_HINT}, or set CHROMIUM to its path`;
    // jest reports a skipped test by its name only in verbose runs: say it in every run.
    process.stderr.write(`Skipping the browser tests "${title}": ${why}.\n`);
    describe(title, () => {
      it.skip(`skipped: ${why}`, () => undefined);
    });
  }
}

/** Headless; without the sandbox, which needs privileges a test runner (root on CI) does not get. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

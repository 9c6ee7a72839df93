/**
 * Debian's Chromium, driven by playwright-core, for the tests of the settings page. Never a browser
 * downloaded for the tests: the machine's own, as a user of the Homebridge UI would have.
 */
import { describe, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM_PATH = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Without Chromium the browser tests cannot run: on a developer's machine they are skipped, under
 * the name of a test that says why; on CI (CI is set) that same test fails, so a missing browser is
 * never mistaken for a pass.
 */
export function describeWithChromium(title: string, tests: () => void): void {
  if (existsSync(CHROMIUM_PATH)) {
    describe(title, tests);
    return;
  }
  const why = `no Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install chromium\` (CI does so in .ci/run), or set CHROMIUM to its path`;
  const onCi = process.env.CI !== undefined;
  if (!onCi) {
    // jest reports a skipped test by its name only in verbose runs: say it in every run.
    process.stderr.write(`Skipping the browser tests "${title}": ${why}.\n`);
  }
  describe(title, () => {
    (onCi ? it : it.skip)(`needs Chromium: ${why}`, () => {
      throw new Error(why);
    });
  });
}

/** Headless; without the sandbox, which needs privileges a test runner (root on CI) does not get. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * What Homebridge's plugin verification runs a plugin through: no platform block, an empty one, and
 * credentials for servers that cannot be reached or whose name does not resolve. In every case
 * Homebridge starts, stays up, publishes what it should and exits in time on SIGTERM.
 *
 * The cases are runs of one Homebridge storage in a row, so each run is also the previous run's
 * restart on the same HAP port; the last case repeats the one before, whose receiver must get its
 * port back. No run may change the plugin's own folder.
 */
import { expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-process.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changedFiles, snapshotFiles, type FileSnapshot } from '../../scripts/lib/file-snapshot.js';
import { RUNNING_LINE, START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { DOORBELLS, doorbellMotionPlatform, PLATFORM, pluginLogLine, type PluginEndpoints } from './support/plugin-config.js';
import { expectNoPortInUse, expectRunningOnce, expectStoppedInTime, itLeavesNoTrace, usePluginSetup, WATCH_MS } from './support/plugin-setup.js';

/** No real doorbell service issued it; it must stay out of the log all the same. */
const FAKE_ACCESS_TOKEN = 'e2e-fake-doorbell-access-token';

/** RFC 6761 keeps `.invalid` from ever resolving; the loopback guard answers it without a query. */
const UNRESOLVABLE = { accountUrl: 'https://account.doorbell-motion.invalid', doorbellUrl: 'https://doorbell.doorbell-motion.invalid' };
const ANSWERED_LOCALLY = /^\[loopback-guard\] DNS lookup of account\.doorbell-motion\.invalid answered ENOTFOUND/;

/**
 * Left out of the plugin folder's comparison: git's data, and what .gitignore names (dependencies, and
 * what other test files or scripts write meanwhile, such as the test cache and the screenshots), but
 * dist/, the built plugin, which no run may change. Names there without wildcards: a folder's ends in
 * a slash; either matches at any depth, as a skipped name does here.
 */
async function ignoredNames(): Promise<{ folders: string[]; files: string[] }> {
  const lines = (await readFile(join(REPO_ROOT, '.gitignore'), 'utf8')).split('\n').map((line) => line.trim());
  const names = lines.filter((line) => /^[^#!*?[/][^*?[/]*\/?$/.test(line));
  const folders = names.filter((name) => name.endsWith('/')).map((name) => name.slice(0, -1));
  return { folders: ['.git', ...folders.filter((folder) => folder !== 'dist')], files: names.filter((name) => !name.endsWith('/')) };
}

async function pluginFolderSnapshot(): Promise<FileSnapshot> {
  const { folders, files } = await ignoredNames();
  const snapshot = await snapshotFiles(REPO_ROOT, folders);
  return new Map([...snapshot].filter(([path]) => !files.includes(basename(path))));
}

const REGION_CALL_FAILED = pluginLogLine('POST /api/v1/getUrlByEmail network');
const REGISTRATION_FAILED = pluginLogLine('PATCH /clients_api/device network');

/** Where the plugin is pointed in a case: its receiver's port, and an https address nothing listens on. */
interface CaseSetup {
  pushPort: number;
  closedUrl: string;
}

interface PluginCheck {
  title: string;
  platforms(setup: CaseSetup): Array<Record<string, unknown>>;
  /** Lines that show the plugin got as far as the case is about, and failed there as it should. */
  evidence(setup: CaseSetup): RegExp[];
  /** Accessories on the bridge, the bridge included: the plugin publishes without waiting on the network. */
  published: number;
}

/** The bridge, one accessory per doorbell, and the Doorbell Alerts sensor. */
const PUBLISHED_WITH_DOORBELLS = 1 + DOORBELLS.length + 1;

function unreachable({ pushPort, closedUrl }: CaseSetup): PluginEndpoints {
  return { accountUrl: closedUrl, doorbellUrl: closedUrl, pushPort };
}

const withAccessToken = (setup: CaseSetup) => [doorbellMotionPlatform(unreachable(setup), { doorbellAccessToken: FAKE_ACCESS_TOKEN })];
const receiverUpRegistrationFailed = ({ pushPort }: CaseSetup) => [
  pluginLogLine(`Push receiver listening at 127\\.0\\.0\\.1:${pushPort}`),
  REGISTRATION_FAILED,
];

const CHECKS: PluginCheck[] = [
  {
    title: 'no platform block',
    platforms: () => [],
    evidence: () => [/Loaded plugin: homebridge-doorbell-motion/],
    published: 1,
  },
  {
    title: `a bare { "platform": "${PLATFORM}" }`,
    platforms: () => [{ platform: PLATFORM }],
    evidence: () => [pluginLogLine('not configured', PLATFORM)],
    published: 1,
  },
  {
    title: 'fake credentials, both servers at a closed loopback port',
    platforms: (setup) => [doorbellMotionPlatform(unreachable(setup))],
    evidence: () => [REGION_CALL_FAILED],
    published: PUBLISHED_WITH_DOORBELLS,
  },
  {
    title: 'fake credentials, server names that do not resolve',
    platforms: ({ pushPort }) => [doorbellMotionPlatform({ ...UNRESOLVABLE, pushPort })],
    evidence: () => [ANSWERED_LOCALLY, REGION_CALL_FAILED],
    published: PUBLISHED_WITH_DOORBELLS,
  },
  {
    title: 'a fake doorbellAccessToken, doorbell server at a closed loopback port',
    platforms: withAccessToken,
    evidence: receiverUpRegistrationFailed,
    published: PUBLISHED_WITH_DOORBELLS,
  },
  {
    title: 'the same again: its receiver gets the same port back',
    platforms: withAccessToken,
    evidence: receiverUpRegistrationFailed,
    published: PUBLISHED_WITH_DOORBELLS,
  },
];

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  let pluginFolderBefore: FileSnapshot;
  const setup = usePluginSetup(runtime, async () => {
    pluginFolderBefore = await pluginFolderSnapshot();
  });

  it.each(CHECKS)(
    '$title: starts on the HAP port, stays up, publishes, exits within 12 s of SIGTERM',
    async ({ platforms, evidence, published }) => {
      const caseSetup = { pushPort: setup().endpoints.pushPort, closedUrl: `https://127.0.0.1:${await freeLoopbackPort()}` };
      await setup().sandbox.writeConfig(platforms(caseSetup));

      const stopped = await setup().runOnce(async (homebridge) => {
        for (const line of evidence(caseSetup)) {
          await homebridge.waitForLine(line, START_TIMEOUT_MS);
        }
        await sleep(WATCH_MS);

        const [, hapPort] = await homebridge.waitForLine(RUNNING_LINE, 0);
        expect(Number(hapPort)).toBe(setup().sandbox.bridge.port);
        expectNoPortInUse(homebridge);
        expectRunningOnce(homebridge);
        expect(await (await setup().controller()).accessories()).toHaveLength(published);
      });
      expectStoppedInTime(stopped);
    },
    START_TIMEOUT_MS + WATCH_MS + STOP_TIMEOUT_MS,
  );

  itLeavesNoTrace(setup, [FAKE_ACCESS_TOKEN]);

  it('left the plugin folder alone in every run', async () => {
    expect((await ignoredNames()).folders).toEqual(expect.arrayContaining(['node_modules', '.cache', '.ci-results']));
    expect(changedFiles(pluginFolderBefore, await pluginFolderSnapshot())).toEqual([]);
  });
});

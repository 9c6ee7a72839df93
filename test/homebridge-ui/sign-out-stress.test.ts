/**
 * A sign-out on the settings page sticks while the plugin runs on the same data folder: 200 sign-ins
 * and sign-outs through the page's requests, against the simulator, with a platform in this process
 * that follows each session it notices, writes its status, and now and then is refused a session and
 * marks it invalid just as the page signs out. Now and then, too, the page asks for the account while
 * the process has no file descriptor left (as in a flood of connections): that read fails, and the
 * sign-out after it must remove the file all the same. session.json is looked at after every step.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import type { RecordedRequest } from '../../simulator/types.js';
import { DATA_FILES, dataFolderPath } from '../../src/storage/data-folder.js';
import type { StoredSession } from '../../src/session/session-store.js';
import { withoutFreeDescriptors } from '../support/system-faults.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT, delay, waitFor } from '../../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from '../support/platform-testbed.js';
import { FAST_RETRY } from './settings-page.js';

const CYCLES = 200;
/**
 * Twice in every this many cycles the plugin is given time to take up the page's session, which the
 * service refuses (it ended it as it issued it): once the page signs out as the refusal is sent, once
 * it first reads the account without a free descriptor.
 */
const TAKEN_UP_EVERY = 24;
/** The whole run: about 20 s on a quiet machine, over 40 s on a busy one; this leaves room beyond that. */
const RUN_LIMIT_MS = 150_000;
/**
 * The plugin looks at session.json once a second and then registers with the session it found; a busy
 * machine (two cores shared with other test runs) slows both many times over.
 */
const FOLLOW_MS = 20_000;
/** Longer than the plugin's next look at session.json and its next status write, on a busy machine too. */
const SETTLE_MS = 3_000;

const noRequestWatch = (): void => undefined;

describe('the settings page: signing out while the plugin runs', () => {
  let watchRequest: (request: RecordedRequest) => void = noRequestWatch;
  const testbed = usePlatformTestbed(undefined, { onSimulatorRequest: (request) => watchRequest(request) });

  it(
    'removes session.json at every one of 200 sign-outs before answering, and nothing brings it back',
    async () => {
      const platform = testbed.launch();
      await waitFor(() => allConfirmed(platform), 'the plugin signed in with its own code', FOLLOW_MS);
      const pageLog = createTestLogger('UI');
      const requests = new SettingsRequests({ storagePath: testbed.storagePath, readPlatformBlock: async () => undefined, log: pageLog, retry: FAST_RETRY });
      const sessionPath = join(dataFolderPath(testbed.storagePath), DATA_FILES.session);
      const onDisk = () => readSessionFile(sessionPath);
      const fields = (code: string) => ({ serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', code });
      // The page asks for the account state while other requests are under way, as an open page does.
      const reader = keepAsking(() => requests.account());
      let refusals = 0;
      let shortageFailures = 0;

      try {
        for (let cycle = 0; cycle < CYCLES; cycle += 1) {
          const code = String(100_000 + cycle);
          testbed.sim.addAccount({ email: ACCOUNT.email, code });
          const step = `cycle ${cycle}`;
          const turn = cycle % TAKEN_UP_EVERY;
          const refused = turn === TAKEN_UP_EVERY - 1 || turn === TAKEN_UP_EVERY / 2 - 1;
          // The service ends this session as it issues it, before the page writes session.json: the
          // plugin may take it up as soon as it is on disk (a registration under way reads the file
          // again), and a session it used before the service ended it would never be refused.
          const wasRefused = refused ? refusalOfNextSession() : undefined;

          expect([step, (await requests.signIn(fields(code))).state]).toEqual([step, 'signed-in']);
          const token = testbed.sim.issuedTokens.at(-1) as string;
          expect([step, (await onDisk())?.login.token]).toEqual([step, token]);

          let shortageAnswer: string | undefined;
          if (turn === TAKEN_UP_EVERY - 1) {
            // The plugin, taking the session up, is refused, and marks it invalid while the page signs
            // out, the moment the refusal is sent.
            await refusedToPlugin(step, wasRefused);
          } else if (turn === TAKEN_UP_EVERY / 2 - 1) {
            // The plugin marks the session invalid, so the file changed since the page last read it;
            // then the page asks for the account while the process has no descriptor left.
            await reader.pause();
            await refusedToPlugin(step, wasRefused);
            await untilPluginRecordedRefusals(step);
            expect([step, (await onDisk())?.invalidatedAt]).toEqual([step, expect.any(String)]);
            shortageAnswer = await withoutFreeDescriptors(() => requests.account().then(JSON.stringify, String));
            reader.resume();
          }

          expect([step, await requests.signOut()]).toEqual([step, { state: 'signed-out' }]);
          expect([step, await onDisk()]).toEqual([step, undefined]);
          if (shortageAnswer !== undefined) {
            // The file could not be read, and the page says so; never that there is no session. (A
            // descriptor another part of this process let go of meanwhile lets the read through.)
            expect([step, shortageAnswer]).toEqual([step, expect.stringMatching(/too many open files \(EMFILE\)|^\{"state":"expired"/)]);
            shortageFailures += shortageAnswer.includes('EMFILE') ? 1 : 0;
          }
          if (turn === TAKEN_UP_EVERY - 1) {
            await untilPluginRecordedRefusals(step);
            expect([step, await onDisk()]).toEqual([step, undefined]);
          }
          expect([step, await requests.account()]).toEqual([step, { state: 'signed-out' }]);
          expect([step, await onDisk()]).toEqual([step, undefined]);
        }
        await delay(SETTLE_MS);
        expect(await onDisk()).toBeUndefined();
        expect(await requests.account()).toEqual({ state: 'signed-out' });
      } finally {
        await reader.stop();
      }

      expect(shortageFailures).toBeGreaterThan(0);
      expect(reader.failures).toEqual([]);
      // The one warning of the page: each account state it could not read for want of a descriptor.
      const pageProblems = pageLog.lines.filter(({ level }) => level !== 'info' && level !== 'debug');
      expect(pageProblems.filter(({ message }) => !message.includes('too many open files (EMFILE)'))).toEqual([]);

      /** Waits until the plugin, taking up the page's session, is refused. */
      async function refusedToPlugin(step: string, wasRefused: (() => boolean) | undefined): Promise<void> {
        await waitFor(() => wasRefused?.() === true, `${step}: the plugin using the page's session`, FOLLOW_MS);
        refusals += 1;
      }

      /** The plugin logs a refused session once it has marked it invalid in session.json, or found none to mark. */
      async function untilPluginRecordedRefusals(step: string): Promise<void> {
        const recorded = () => platform.log.lines.filter(({ message }) => message.startsWith('The doorbell service no longer accepts this session')).length;
        await waitFor(() => recorded() === refusals, `${step}: the plugin recording the refused session`, FOLLOW_MS);
      }
    },
    RUN_LIMIT_MS,
  );

  /**
   * Revokes the token of the next sign-in the moment the simulator issues it; the answer says whether
   * the simulator has refused a request made with it since.
   */
  function refusalOfNextSession(): () => boolean {
    let token: string | undefined;
    let refused = false;
    watchRequest = ({ route, status, headers }) => {
      if (token === undefined && route === 'login' && status === 200) {
        token = testbed.sim.issuedTokens.at(-1) as string;
        testbed.sim.revokeToken(token);
      } else if (token !== undefined && status === 401 && headers.authorization === `Bearer ${token}`) {
        refused = true;
        watchRequest = noRequestWatch;
      }
    };
    return () => refused;
  }
});

/** session.json as it is on disk now; undefined when there is none. */
async function readSessionFile(path: string): Promise<StoredSession | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StoredSession;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw error;
  }
}

interface Asker {
  failures: string[];
  /** Resolves once the ask under way has ended; none starts until resume(). */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

/** Calls `ask` again and again until stopped, recording what failed. */
function keepAsking(ask: () => Promise<unknown>): Asker {
  const failures: string[] = [];
  let stopped = false;
  let paused = false;
  let asking: Promise<unknown> = Promise.resolve();
  const running = (async () => {
    while (!stopped) {
      if (!paused) {
        asking = ask().catch((error: unknown) => failures.push(String(error)));
        await asking;
      }
      // A turn of the event loop between asks, so timers and the requests under test run too.
      await delay(paused ? 5 : 0);
    }
  })();
  return {
    failures,
    pause: async () => {
      paused = true;
      await asking;
    },
    resume: () => {
      paused = false;
    },
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

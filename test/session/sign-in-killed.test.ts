/**
 * A sign-in cut off mid-way, as when config-ui-x ends the settings page's server process, or Homebridge
 * restarts, while the page says "Signing in…": a real process, killed with SIGKILL while its login
 * waits for the service's answer. Its claim on the code stays on disk with no decision. Until the claim
 * is 15 minutes old no other sign-in sends the code; after that the code counts as unused again.
 * The clock is injected into the stores that judge the claim; the host's clock only stamps it.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HomebridgeProcess, resolveNode22Binary } from '../../scripts/lib/homebridge-process.js';
import { withTimeout } from '../../scripts/lib/timeout.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { CodeUnderWayError, signInWithCode, type SignInAccount } from '../../src/session/sign-in.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { useSimulator } from '../support/each-test.js';

const SIGN_IN_CHILD = new URL('./fixtures/sign-in-child.ts', import.meta.url).pathname;
const EMAIL = 'porch+light@example.com';
const CODE = '012345';
const MINUTE = 60_000;
/** Longer than the test: the login is still waiting for its answer when the process is killed. */
const LOGIN_HANGS_MS = 10 * MINUTE;
/** tsx compiles the sources first, which takes a while on a busy machine. */
const LOGIN_SENT_WITHIN_MS = 40_000;
const EXIT_WITHIN_MS = 10_000;
const FAST_RETRY = { backoff: { firstMs: 1, factor: 2, maxMs: 2, jitter: true }, wait: async () => undefined };

let storagePath: string;

beforeEach(async () => {
  storagePath = await mkdtemp(join(tmpdir(), 'sign-in-killed-'));
});

afterEach(async () => {
  await rm(storagePath, { recursive: true, force: true });
});

describe('a sign-in whose process was killed while its login waited for an answer', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }] });

  function account(): SignInAccount {
    return { serverUrl: sim().accountUrl, email: EMAIL, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
  }

  /** Another process on the same data folder (a restarted Homebridge, a reopened settings page), its clock at `now`. */
  function storeAt(now: number): SessionStore {
    const log = createTestLogger();
    return new SessionStore(openDataFolder(storagePath, log), log, { now: () => now });
  }

  function signInAt(now: number) {
    const log = createTestLogger();
    return signInWithCode(account(), CODE, { store: storeAt(now), log: new SecretMaskingLogger(log), retry: FAST_RETRY });
  }

  /** The sign-in as a child process; resolves once its login request reached the service, and when that was. */
  async function signInCutOff(): Promise<{ claimedAfter: number; claimedBefore: number }> {
    const node = await resolveNode22Binary();
    const claimedAfter = Date.now();
    const child = new HomebridgeProcess(
      spawn(node, ['--import', 'tsx', SIGN_IN_CHILD, storagePath, sim().accountUrl, EMAIL, CODE], { stdio: ['ignore', 'pipe', 'pipe'] }),
      'The signing-in process',
    );
    try {
      await pollUntil(
        () => ({ logins: sim().requestsTo('login').length, running: child.running, output: child.lines }),
        ({ logins, running }) => logins > 0 || !running,
        LOGIN_SENT_WITHIN_MS,
        'the login request of the signing-in process',
      );
      expect(child.running).toBe(true);
      const claimedBefore = Date.now();
      process.kill(child.pid, 'SIGKILL');
      await withTimeout(child.closed, EXIT_WITHIN_MS, 'the killed process');
      return { claimedAfter, claimedBefore };
    } finally {
      await child.stop(EXIT_WITHIN_MS);
    }
  }

  it('keeps the code under way for 15 minutes, never sent twice, then sends it and signs in', async () => {
    sim().injectFault('login', { delayMs: LOGIN_HANGS_MS, status: 503 });

    const { claimedAfter, claimedBefore } = await signInCutOff();

    // The claim is on disk, with no decision: the process died before any answer.
    await expect(storeAt(claimedBefore).codeState(CODE)).resolves.toBe('under-way');
    expect(sim().requestsTo('login')).toHaveLength(1);

    // 14 minutes after the claim at the latest: refused as under way, not as used, and not sent.
    const refusal = signInAt(claimedAfter + 14 * MINUTE);
    await expect(refusal).rejects.toBeInstanceOf(CodeUnderWayError);
    await expect(refusal).rejects.toThrow(/^A sign-in with this verification code is already under way/);
    expect(sim().requestsTo('region')).toHaveLength(1);
    expect(sim().requestsTo('login')).toHaveLength(1);

    // 15 minutes after the claim at the earliest: the code is unused again, sent, and signs in.
    const later = claimedBefore + 15 * MINUTE;
    const session = await signInAt(later);

    expect(session.login.token).toBe(sim().issuedTokens[0]);
    const logins = sim().requestsTo('login');
    expect(logins).toHaveLength(2);
    expect(logins.map(({ body }) => new URLSearchParams(body).get('code'))).toEqual([CODE, CODE]);
    await expect(storeAt(later).codeState(CODE)).resolves.toBe('spent');
    expect(sim().invalidRequests()).toEqual([]);
  }, 90_000);
});

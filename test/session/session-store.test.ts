import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { PushSecretStore } from '../../src/session/push-secrets.js';
import { hashCode, SessionStore } from '../../src/session/session-store.js';
import type { StoredSession } from '../../src/session/session-store.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT_SERVER, EMAIL, sampleSession } from './fixtures/sample-session.js';
import type { TestLogger } from '../../scripts/lib/homebridge-api.js';

const NOBODY = 65534;

let root: string;
let storagePath: string;
let folder: string;
let log: TestLogger;
/** The stores' clock: set by the tests, never the host's. */
let clock: number;

const MINUTE = 60_000;

beforeEach(async () => {
  clock = Date.parse('2026-11-22T10:00:00.000Z');
  root = await mkdtemp(join(tmpdir(), 'session-store-'));
  storagePath = join(root, 'storage');
  folder = join(storagePath, 'doorbell-motion');
  await mkdir(storagePath);
  log = createTestLogger();
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The messages logged at one level, in order. */
function messages(level: keyof Logger): string[] {
  return log.lines.filter((line) => line.level === level).map((line) => line.message);
}

/** Both stores of one process on the data folder, as the plugin has them: a restart is a new one. */
type Store = SessionStore & { receiverSecret(): Promise<string> };

function newStore(): Store {
  const dataFolder = openDataFolder(storagePath, log);
  const push = new PushSecretStore(dataFolder, log);
  const store = new SessionStore(dataFolder, log, { now: () => clock });
  return Object.assign(store, { receiverSecret: async () => (await push.secrets()).receiverSecret });
}

async function installationOnDisk(): Promise<{ installationId: string; spentCodeHashes: string[]; claimedCodes?: Array<{ hash: string; claimedAt: string }> }> {
  return JSON.parse(await readFile(join(folder, 'installation.json'), 'utf8'));
}

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

async function filesUnder(path: string): Promise<string[]> {
  return (await readdir(path, { recursive: true })).sort();
}

async function tempFilesIn(path: string): Promise<string[]> {
  return (await readdir(path)).filter((name) => name.endsWith('.tmp'));
}

/** Root ignores file modes, so as root the action runs with the effective user id of `nobody`. */
async function withoutRootPrivileges<T>(action: () => Promise<T>): Promise<T> {
  if (process.getuid?.() !== 0 || process.seteuid === undefined) {
    return action();
  }
  process.seteuid(NOBODY);
  try {
    return await action();
  } finally {
    process.seteuid(0);
  }
}

describe('session.json', () => {
  it('finds a saved session for the same e-mail and account server, after a restart too', async () => {
    const session = sampleSession();
    const store = newStore();
    await store.saveSession(session);

    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(session);
    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(session);
    expect(JSON.parse(await readFile(join(folder, 'session.json'), 'utf8'))).toEqual(session);
  });

  it('does not use a session of another e-mail or account server', async () => {
    await newStore().saveSession(sampleSession());
    const store = newStore();

    await expect(store.findSession('someone@example.com', ACCOUNT_SERVER)).resolves.toBeUndefined();
    await expect(store.findSession(EMAIL, 'https://other.example.com')).resolves.toBeUndefined();
  });

  it('does not reuse an invalidated session, also after a restart', async () => {
    const store = newStore();
    await store.saveSession(sampleSession());
    await store.markSessionInvalid(sampleSession().login.token);

    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).resolves.toBeUndefined();
    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toBeUndefined();
    const onDisk = JSON.parse(await readFile(join(folder, 'session.json'), 'utf8')) as StoredSession;
    expect(new Date(onDisk.invalidatedAt ?? '').toISOString()).toBe(onDisk.invalidatedAt);
  });

  it('marks only the session whose token was refused: one saved meanwhile stays usable', async () => {
    const store = newStore();
    const refused = sampleSession();
    const fresh = sampleSession({ loggedInAt: '2026-11-23T10:00:00.000Z', codeHash: hashCode('654321'), login: { ...refused.login, token: 'a-fresh-token' } });
    await store.saveSession(fresh);
    await store.markSessionInvalid(refused.login.token);

    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(fresh);
  });

  it('uses a newly saved session after the old one was invalidated', async () => {
    const store = newStore();
    await store.saveSession(sampleSession());
    await store.markSessionInvalid(sampleSession().login.token);
    const fresh = sampleSession({ loggedInAt: '2026-11-23T10:00:00.000Z', codeHash: hashCode('654321') });
    await store.saveSession(fresh);

    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(fresh);
  });
});

describe('one-time codes', () => {
  it('hashes a code with SHA-256, in hex', () => {
    expect(hashCode('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('lets one caller claim a code; others find it under way until it is given back', async () => {
    const store = newStore();

    await expect(store.claimCode('012345')).resolves.toBe('claimed');
    await expect(newStore().claimCode('012345')).resolves.toBe('under-way');
    await expect(newStore().codeState('012345')).resolves.toBe('under-way');
    await newStore().releaseCode('012345');
    await expect(store.codeState('012345')).resolves.toBe('unused');
    await expect(store.claimCode('012345')).resolves.toBe('claimed');
  });

  it('spends a code for good: refused by every store, whatever the clock says, and not given back', async () => {
    const store = newStore();
    await store.claimCode('012345');
    await store.spendCode('012345');
    await newStore().releaseCode('012345');
    clock += 365 * 24 * 60 * MINUTE;

    await expect(newStore().codeState('012345')).resolves.toBe('spent');
    await expect(newStore().claimCode('012345')).resolves.toBe('spent');
    await expect(newStore().isCodeSpent('012345')).resolves.toBe(true);
    expect((await installationOnDisk()).claimedCodes).toEqual([]);
  });

  it('counts a claim with no decision as no claim once it is 15 minutes old', async () => {
    await newStore().claimCode('012345');
    const other = newStore();

    clock += 15 * MINUTE - 1;
    await expect(other.codeState('012345')).resolves.toBe('under-way');
    await expect(other.claimCode('012345')).resolves.toBe('under-way');
    clock += 1;
    await expect(other.codeState('012345')).resolves.toBe('unused');
    await expect(other.claimCode('012345')).resolves.toBe('claimed');
    await expect(newStore().codeState('012345')).resolves.toBe('under-way');
  });

  it('lets a claim stamped in the future (the clock was set back) hold no longer than 15 minutes', async () => {
    await newStore().claimCode('012345');
    const store = newStore();

    clock -= 15 * MINUTE - 1;
    await expect(store.codeState('012345')).resolves.toBe('under-way');
    clock -= 1;
    await expect(store.codeState('012345')).resolves.toBe('unused');
  });

  it('drops expired claims from the file at its next write, keeping the live ones', async () => {
    const store = newStore();
    await store.claimCode('111111');
    clock += 10 * MINUTE;
    await store.claimCode('222222');
    clock += 6 * MINUTE;

    await store.claimCode('333333');

    const claimed = (await installationOnDisk()).claimedCodes?.map(({ hash }) => hash);
    expect(claimed).toEqual([hashCode('222222'), hashCode('333333')]);
    expect((await installationOnDisk()).claimedCodes?.[1].claimedAt).toBe('2026-11-22T10:16:00.000Z');
  });

  it('remembers a spent code across a new store, and only that code, by its hash', async () => {
    await newStore().spendCode('012345');
    const store = newStore();

    await expect(store.isCodeSpent('012345')).resolves.toBe(true);
    await expect(store.codeState('12345')).resolves.toBe('unused');
    const onDisk = await readFile(join(folder, 'installation.json'), 'utf8');
    expect(onDisk).toContain(hashCode('012345'));
    expect(onDisk).not.toContain('"012345"');
  });

  it('reads an installation.json of the earlier version (spent codes only): those codes stay spent', async () => {
    const installationId = '5f0c6a2e-8d1b-4f3a-9c7e-2b4d6f8a0c1e';
    await mkdir(folder);
    await writeFile(join(folder, 'installation.json'), JSON.stringify({ installationId, spentCodeHashes: [hashCode('012345')] }));
    const store = newStore();
    const clientId = await store.clientIdFor(EMAIL);
    clock += 60 * MINUTE;

    await expect(store.codeState('012345')).resolves.toBe('spent');
    await expect(store.claimCode('012345')).resolves.toBe('spent');
    await expect(store.claimCode('654321')).resolves.toBe('claimed');
    await expect(newStore().codeState('012345')).resolves.toBe('spent');
    await expect(newStore().clientIdFor(EMAIL)).resolves.toBe(clientId);
    expect(await installationOnDisk()).toEqual({
      installationId,
      spentCodeHashes: [hashCode('012345')],
      claimedCodes: [{ hash: hashCode('654321'), claimedAt: '2026-11-22T11:00:00.000Z' }],
    });
    expect(log.lines).toEqual([]);
  });

  it('keeps the latest 50 spent codes and the latest 50 claims', async () => {
    const store = newStore();
    const codes = Array.from({ length: 51 }, (_, index) => String(index).padStart(6, '0'));
    const claims = codes.map((code) => `9${code.slice(1)}`);
    for (const code of codes) {
      await store.claimCode(code);
      await store.spendCode(code);
    }
    for (const code of claims) {
      await store.claimCode(code);
    }
    const restarted = newStore();

    await expect(restarted.codeState(codes[0])).resolves.toBe('unused');
    await expect(restarted.codeState(codes[1])).resolves.toBe('spent');
    await expect(restarted.codeState(codes[50])).resolves.toBe('spent');
    await expect(restarted.codeState(claims[0])).resolves.toBe('unused');
    await expect(restarted.codeState(claims[1])).resolves.toBe('under-way');
    await expect(restarted.codeState(claims[50])).resolves.toBe('under-way');
    const onDisk = await installationOnDisk();
    expect(onDisk.spentCodeHashes).toHaveLength(50);
    expect(onDisk.claimedCodes).toHaveLength(50);
  });

  it('gives a code to one of two stores on one folder claiming it at the same time', async () => {
    const outcomes = await Promise.all([newStore().claimCode('012345'), newStore().claimCode('012345')]);

    expect(outcomes.sort()).toEqual(['claimed', 'under-way']);
    expect((await installationOnDisk()).claimedCodes).toHaveLength(1);
  });
});

describe('installation identity and receiver secret', () => {
  it('gives a client id that is stable across stores and differs per e-mail', async () => {
    const first = await newStore().clientIdFor(EMAIL);
    const store = newStore();

    await expect(store.clientIdFor(EMAIL)).resolves.toBe(first);
    await expect(store.clientIdFor('someone@example.com')).resolves.not.toBe(first);
    expect(first).not.toContain(EMAIL);
  });

  it('gives a receiver secret of 43 base64url characters, stable across stores', async () => {
    const secret = await newStore().receiverSecret();

    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(newStore().receiverSecret()).resolves.toBe(secret);
    expect(JSON.parse(await readFile(join(folder, 'push.json'), 'utf8'))).toEqual({ receiverSecret: secret, relayTopic: expect.any(String) });
  });

  it('gives a relay topic of "up" and 12 base64url characters, stable across stores and unlike any other', async () => {
    const pushSecrets = () => new PushSecretStore(openDataFolder(storagePath, log), log).secrets();
    const { relayTopic } = await pushSecrets();

    expect(relayTopic).toMatch(/^up[A-Za-z0-9_-]{12}$/);
    await expect(pushSecrets()).resolves.toMatchObject({ relayTopic });
    await rm(folder, { recursive: true });
    await expect(pushSecrets()).resolves.not.toMatchObject({ relayTopic });
  });

  it('adds a relay topic to a push.json written before relay mode, keeping its receiver secret', async () => {
    const secret = 'B'.repeat(43);
    await mkdir(folder);
    await writeFile(join(folder, 'push.json'), JSON.stringify({ receiverSecret: secret }));

    const secrets = await new PushSecretStore(openDataFolder(storagePath, log), log).secrets();

    expect(secrets).toEqual({ receiverSecret: secret, relayTopic: expect.stringMatching(/^up[A-Za-z0-9_-]{12}$/) });
    expect(JSON.parse(await readFile(join(folder, 'push.json'), 'utf8'))).toEqual(secrets);
    expect(log.lines).toEqual([]);
  });

  it('creates each value once when calls overlap, and loses no spent code', async () => {
    const store = newStore();
    const [secretA, secretB, idA, idB] = await Promise.all([
      store.receiverSecret(),
      store.receiverSecret(),
      store.clientIdFor(EMAIL),
      store.clientIdFor(EMAIL),
      store.spendCode('111111'),
      store.spendCode('222222'),
      store.claimCode('333333'),
    ]);
    const restarted = newStore();

    expect(secretB).toBe(secretA);
    expect(idB).toBe(idA);
    await expect(restarted.receiverSecret()).resolves.toBe(secretA);
    await expect(restarted.clientIdFor(EMAIL)).resolves.toBe(idA);
    await expect(restarted.isCodeSpent('111111')).resolves.toBe(true);
    await expect(restarted.isCodeSpent('222222')).resolves.toBe(true);
    await expect(restarted.codeState('333333')).resolves.toBe('under-way');
  });
});

describe('files on disk', () => {
  async function useEveryFile(store: Store): Promise<void> {
    await store.saveSession(sampleSession());
    await store.markSessionInvalid(sampleSession().login.token);
    await store.claimCode('012345');
    await store.clientIdFor(EMAIL);
    await store.receiverSecret();
  }

  it('writes only its three files, inside <storage>/doorbell-motion/, with no temp files left', async () => {
    await useEveryFile(newStore());

    expect(await filesUnder(root)).toEqual([
      'storage',
      join('storage', 'doorbell-motion'),
      join('storage', 'doorbell-motion', 'installation.json'),
      join('storage', 'doorbell-motion', 'push.json'),
      join('storage', 'doorbell-motion', 'session.json'),
    ]);
  });

  it('creates the folder 0700 and the files 0600', async () => {
    await useEveryFile(newStore());

    expect(await modeOf(folder)).toBe(0o700);
    for (const name of ['session.json', 'installation.json', 'push.json']) {
      expect(await modeOf(join(folder, name))).toBe(0o600);
    }
  });

  it('tightens an existing folder and files with looser modes, keeping their content', async () => {
    const secret = 'A'.repeat(43);
    await mkdir(folder);
    await chmod(folder, 0o777);
    await writeFile(join(folder, 'session.json'), JSON.stringify(sampleSession()), { mode: 0o644 });
    await writeFile(join(folder, 'push.json'), JSON.stringify({ receiverSecret: secret }), { mode: 0o666 });
    const store = newStore();

    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(sampleSession());
    await expect(store.receiverSecret()).resolves.toBe(secret);
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(join(folder, 'session.json'))).toBe(0o600);
    expect(await modeOf(join(folder, 'push.json'))).toBe(0o600);
  });

  it('treats missing files as absent without a word, and invalidating nothing writes nothing', async () => {
    const store = newStore();

    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).resolves.toBeUndefined();
    await expect(store.isCodeSpent('012345')).resolves.toBe(false);
    await store.markSessionInvalid(sampleSession().login.token);
    expect(log.lines).toEqual([]);
    expect(await readdir(folder)).toEqual([]);
  });
});

describe('broken files', () => {
  const MARKER = 'SECRET-MARKER-7f3a';
  const probes = {
    'session.json': (store: Store) => store.findSession(EMAIL, ACCOUNT_SERVER),
    'installation.json': (store: Store) => store.isCodeSpent('012345'),
    'push.json': (store: Store) => store.receiverSecret(),
  };
  const cases: Array<[keyof typeof probes, string, string]> = [
    ['session.json', 'bad JSON', `{"login":{"token":"${MARKER}"`],
    ['session.json', 'an empty token', JSON.stringify(sampleSession({ email: MARKER, login: { token: '' } }))],
    ['session.json', 'a login that is not an object', JSON.stringify({ ...sampleSession(), login: MARKER })],
    ['installation.json', 'bad JSON', `${MARKER}`],
    ['installation.json', 'hashes that are not SHA-256', JSON.stringify({ installationId: 'id', spentCodeHashes: [MARKER] })],
    [
      'installation.json',
      'a claim without a time',
      JSON.stringify({ installationId: 'id', spentCodeHashes: [], claimedCodes: [{ hash: hashCode('1'), claimedAt: MARKER }] }),
    ],
    ['push.json', 'bad JSON', `{"receiverSecret": ${MARKER}}`],
    ['push.json', 'a short secret', JSON.stringify({ receiverSecret: MARKER })],
    ['push.json', 'a topic that is not up and 12 characters', JSON.stringify({ receiverSecret: 'C'.repeat(43), relayTopic: MARKER })],
  ];

  it.each(cases)('treats %s with %s as absent, warning once without quoting it', async (name, _problem, content) => {
    await mkdir(folder);
    await writeFile(join(folder, name), content);
    const store = newStore();

    const first = await probes[name](store);
    const second = await probes[name](store);

    expect(JSON.stringify([first, second])).not.toContain(MARKER);
    expect(messages('warn')).toHaveLength(1);
    expect(messages('warn')[0]).toContain(join(folder, name));
    expect(JSON.stringify(log.lines)).not.toContain(MARKER);
  });

  it('replaces a broken push.json with a new secret that then stays', async () => {
    await mkdir(folder);
    await writeFile(join(folder, 'push.json'), 'not json');

    const secret = await newStore().receiverSecret();

    await expect(newStore().receiverSecret()).resolves.toBe(secret);
    expect(messages('warn')).toHaveLength(1);
  });
});

describe('atomic writes', () => {
  it('replaces a file by renaming a new one over it, never rewriting it in place', async () => {
    const store = newStore();
    await store.saveSession(sampleSession());
    const before = await stat(join(folder, 'session.json'));

    await store.saveSession(sampleSession({ email: 'new@example.com' }));

    expect((await stat(join(folder, 'session.json'))).ino).not.toBe(before.ino);
    expect(await tempFilesIn(folder)).toEqual([]);
  });

  it('leaves the old file intact and no temp file when the folder is read-only', async () => {
    const store = newStore();
    const old = sampleSession();
    await store.saveSession(old);
    await chmod(root, 0o755);
    await chmod(storagePath, 0o755);
    await chmod(folder, 0o555);
    try {
      // The same store: it prepared the folder already, so the write itself is what fails.
      const write = withoutRootPrivileges(() => store.saveSession(sampleSession({ email: 'new@example.com' })));
      await expect(write).rejects.toMatchObject({ code: 'EACCES' });
    } finally {
      await chmod(folder, 0o700);
    }

    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(old);
    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(old);
    expect(await tempFilesIn(folder)).toEqual([]);
  });

  it('removes its temp file when the rename fails, leaving what was there', async () => {
    // A folder where session.json belongs: reading it fails (a failure, not a missing file), and
    // renaming a file over it fails.
    await mkdir(join(folder, 'session.json'), { recursive: true });
    await writeFile(join(folder, 'session.json', 'keep'), 'kept');
    const store = newStore();

    await expect(store.findSession(EMAIL, ACCOUNT_SERVER)).rejects.toMatchObject({ name: 'FileReadError', code: 'EISDIR' });
    await expect(store.saveSession(sampleSession())).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await tempFilesIn(folder)).toEqual([]);
    expect(await readFile(join(folder, 'session.json', 'keep'), 'utf8')).toBe('kept');
  });

  it('keeps later writes working after a failed one', async () => {
    await mkdir(join(folder, 'session.json'), { recursive: true });
    const store = newStore();
    await expect(store.saveSession(sampleSession())).rejects.toThrow();
    await rm(join(folder, 'session.json'), { recursive: true });

    await store.saveSession(sampleSession());

    await expect(newStore().findSession(EMAIL, ACCOUNT_SERVER)).resolves.toEqual(sampleSession());
  });
});

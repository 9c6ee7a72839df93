import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountFolderPath, dataFolderPath, openAccountFolder, openDataFolder } from '../../src/storage/data-folder.js';
import { moveTopLevelSession } from '../../src/session/session-store.js';
import { hashCode, SessionStore } from '../../src/session/session-store.js';
import { accountKey } from '../../src/values/address.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT_SERVER, EMAIL, sampleSession } from './fixtures/sample-session.js';

let root: string;
let storagePath: string;
let log: TestLogger;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'account-move-'));
  storagePath = join(root, 'storage');
  await mkdir(storagePath);
  log = createTestLogger();
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The entry of `accounts` that is the account the top-level session was signed in to (the e-mail in another case, the server with a slash). */
const entry = { account: { serverUrl: `${ACCOUNT_SERVER}/`, email: EMAIL.toUpperCase() } };
const key = accountKey(entry) as string;

/** As a config without `accounts` left it: a session and an installation with a spent code in the data folder. */
async function topLevelSignIn(): Promise<void> {
  const store = new SessionStore(openDataFolder(storagePath, log), log);
  await store.saveSession(sampleSession());
  await store.spendCode('111111');
}

/** One process's move: its own folders, as the plugin and the settings page's server each have. */
function move(account: Parameters<typeof moveTopLevelSession>[2] = entry, target = key): Promise<boolean> {
  return moveTopLevelSession(openDataFolder(storagePath, log), openAccountFolder(storagePath, target, log), account, log);
}

function accountStore(target = key): SessionStore {
  return new SessionStore(openAccountFolder(storagePath, target, log), log);
}

function topStore(): SessionStore {
  return new SessionStore(openDataFolder(storagePath, log), log);
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const infoLines = () => log.lines.filter(({ level }) => level === 'info').map(({ message }) => message);

describe('the account folder', () => {
  it('is doorbell-motion/accounts/<key>/ for a key, the data folder without one, and refuses anything but a key', () => {
    expect(accountFolderPath(storagePath, key)).toBe(join(dataFolderPath(storagePath), 'accounts', key));
    expect(accountFolderPath(storagePath, undefined)).toBe(dataFolderPath(storagePath));
    expect(() => accountFolderPath(storagePath, '../../etc')).toThrow('12 lower-case hex digits');
  });

  it('is made private (0700, its parents too) with private files (0600) at its first write', async () => {
    await accountStore().saveSession(sampleSession());
    expect(await modeOf(accountFolderPath(storagePath, key))).toBe(0o700);
    expect(await modeOf(join(dataFolderPath(storagePath), 'accounts'))).toBe(0o700);
    expect(await modeOf(join(accountFolderPath(storagePath, key), 'session.json'))).toBe(0o600);
  });
});

describe('moving the top-level session into the account folder', () => {
  it('moves session.json and installation.json once, with one info line: the account finds its session and its spent code', async () => {
    await topLevelSignIn();
    const clientId = await topStore().clientIdFor(EMAIL);

    expect(await move()).toBe(true);

    const store = accountStore();
    expect((await store.findSession(EMAIL, ACCOUNT_SERVER))?.login.token).toBe('session-token');
    expect(await store.isCodeSpent('111111')).toBe(true);
    expect(await store.clientIdFor(EMAIL)).toBe(clientId);
    expect(await readdir(dataFolderPath(storagePath))).not.toContain('session.json');
    expect(await readdir(dataFolderPath(storagePath))).not.toContain('installation.json');
    expect(await modeOf(join(accountFolderPath(storagePath, key), 'session.json'))).toBe(0o600);
    expect(infoLines()).toEqual([expect.stringContaining('Moved the session into the account')]);
    expect(infoLines()[0]).not.toContain(EMAIL);
    expect(infoLines()[0]).not.toContain('session-token');
    expect(await move()).toBe(false);
    expect(infoLines()).toHaveLength(1);
  });

  it('moves once when two processes (two sets of folders, one lock on disk) move at the same time', async () => {
    await topLevelSignIn();

    const outcomes = await Promise.all([move(), move(), move()]);

    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect((await accountStore().findSession(EMAIL, ACCOUNT_SERVER))?.login.token).toBe('session-token');
    expect(await accountStore().isCodeSpent('111111')).toBe(true);
    expect(infoLines()).toHaveLength(1);
  });

  it('moves nothing for another account, nor for an entry with a doorbell access token', async () => {
    await topLevelSignIn();
    const other = { account: { serverUrl: ACCOUNT_SERVER, email: 'someone-else@example.com' } };
    const otherServer = { account: { serverUrl: 'https://other.example.com', email: EMAIL } };
    const token = { ...entry, doorbellServerUrl: 'https://doorbell.example.com', doorbellAccessToken: 'tk-1' };

    expect(await move(other, accountKey(other))).toBe(false);
    expect(await move(otherServer, accountKey(otherServer))).toBe(false);
    expect(await move(token, accountKey(token))).toBe(false);

    expect((await topStore().findSession(EMAIL, ACCOUNT_SERVER))?.login.token).toBe('session-token');
    expect(await readdir(dataFolderPath(storagePath))).not.toContain('accounts');
    expect(infoLines()).toEqual([]);
  });

  it('keeps a session the account folder already has, and leaves the top-level one where it is', async () => {
    await topLevelSignIn();
    await accountStore().saveSession(sampleSession({ loggedInAt: '2026-11-23T10:00:00.000Z', login: { ...sampleSession().login, token: 'newer-token' } }));

    expect(await move()).toBe(false);

    expect((await accountStore().readSession())?.login.token).toBe('newer-token');
    expect((await topStore().readSession())?.login.token).toBe('session-token');
    expect(infoLines()).toEqual([]);
  });

  it('keeps the account folder installation when it has one, adding the codes spent at the top', async () => {
    await topLevelSignIn();
    const own = accountStore();
    await own.spendCode('222222');
    const ownClientId = await own.clientIdFor(EMAIL);

    expect(await move()).toBe(true);

    const store = accountStore();
    expect(await store.clientIdFor(EMAIL)).toBe(ownClientId);
    expect(await store.isCodeSpent('111111')).toBe(true);
    expect(await store.isCodeSpent('222222')).toBe(true);
    const installation = JSON.parse(await readFile(join(accountFolderPath(storagePath, key), 'installation.json'), 'utf8'));
    expect(installation.spentCodeHashes).toEqual([hashCode('222222'), hashCode('111111')]);
  });

  it('moves nothing when there is no top-level session, or it cannot be read as one', async () => {
    expect(await move()).toBe(false);
    await mkdir(dataFolderPath(storagePath), { recursive: true });
    await writeFile(join(dataFolderPath(storagePath), 'session.json'), '{ not json');
    expect(await move()).toBe(false);
    expect(await readFile(join(dataFolderPath(storagePath), 'session.json'), 'utf8')).toBe('{ not json');
  });
});

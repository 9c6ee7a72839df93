/**
 * The settings page's requests with several accounts, against the simulator's two accounts over
 * loopback HTTP: each request names its account by the entry's own fields (saved or only in the
 * form), and works in that account's own folder, doorbell-motion/accounts/<key>/.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PushReceiver } from '../../src/push/direct/receiver.js';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { SessionStore } from '../../src/session/session-store.js';
import { dataFolderPath, openAccountFolder } from '../../src/storage/data-folder.js';
import { accountKey } from '../../src/values/address.js';
import { linesRevealing } from '../support/log-secrets.js';
import { useSimulator } from '../support/each-test.js';
import { answerOf, everythingSaid, failureOf, useSettingsPage } from './settings-page.js';

const HOME = { email: 'home@example.com', code: '111111', doorbells: ['1000001', '1000002'] };
const CABIN = { email: 'cabin@example.com', code: '222222', doorbells: ['2000001', '2000002'] };

function devicesOf(account: typeof HOME, names: [string, string]) {
  return account.doorbells.map((id, index) => ({ list: 'doorbots' as const, id, description: names[index] as string, kind: 'lpd_v2' }));
}

describe('the settings page with several accounts', () => {
  const sim = useSimulator({
    accounts: [
      { ...HOME, devices: devicesOf(HOME, ['Front Door', 'Back Door']) },
      { ...CABIN, devices: devicesOf(CABIN, ['Cabin Porch', 'Cabin Shed']) },
    ],
  });
  const page = useSettingsPage();
  const receivers: PushReceiver[] = [];

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  /** An entry of `accounts` as the form holds it once signed in: the account fields, no code. */
  function entry(account: typeof HOME, label: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      label,
      account: { serverUrl: sim().accountUrl, email: account.email, country: 'US', countryCode: '1' },
      doorbellServerUrl: sim().doorbellUrl,
      ...extra,
    };
  }

  function signIn(account: typeof HOME, label: string) {
    const fields = { serverUrl: sim().accountUrl, email: account.email, country: 'US', countryCode: '1', code: account.code };
    return page().requests.signIn({ ...fields, entry: { label, account: {}, doorbellServerUrl: sim().doorbellUrl } });
  }

  function folderOf(account: typeof HOME): string {
    const key = accountKey({ account: { serverUrl: sim().accountUrl, email: account.email } });
    return join(page().storagePath, 'doorbell-motion', 'accounts', key as string);
  }

  const exists = (path: string) => stat(path).then(
    () => true,
    () => false,
  );

  it("signs each account in with its own code into its own folder, and answers each only its own state", async () => {
    await signIn(HOME, 'Home');
    const cabin = await answerOf(page(), signIn(CABIN, 'Cabin'));

    expect(cabin).toMatchObject({ state: 'signed-in', email: CABIN.email });
    expect(await answerOf(page(), page().requests.account({ entry: entry(HOME, 'Home') }))).toMatchObject({ state: 'signed-in', email: HOME.email });
    expect(await answerOf(page(), page().requests.account({ entry: entry(CABIN, 'Cabin') }))).toMatchObject({ state: 'signed-in', email: CABIN.email });
    // An entry added in the form without an account yet.
    expect(await answerOf(page(), page().requests.account({ entry: { label: 'Account 3' } }))).toEqual({ state: 'signed-out' });
    expect(await exists(join(folderOf(HOME), 'session.json'))).toBe(true);
    expect(((await stat(folderOf(CABIN))).mode & 0o777).toString(8)).toBe('700');
    expect(await exists(join(page().storagePath, 'doorbell-motion', 'session.json'))).toBe(false);
    // The one account at the top of the block has none: the page of a config without accounts is as before.
    expect(await answerOf(page(), page().requests.account())).toEqual({ state: 'signed-out' });
    expect(sim().account(HOME.email)?.tokens).toHaveLength(1);
    expect(sim().account(CABIN.email)?.tokens).toHaveLength(1);
    expect(page().log.lines.map(({ message }) => message)).toEqual(
      expect.arrayContaining([`[Cabin] Signed in as cabin (${CABIN.email}) from the settings page`]),
    );
  });

  it("lists each account's doorbells with its own session, marking those config.json holds for that account", async () => {
    await signIn(HOME, 'Home');
    await signIn(CABIN, 'Cabin');
    page().block = { platform: 'DoorbellMotion', accounts: [entry(HOME, 'Home', { doorbells: [{ deviceId: '1000002' }] }), entry(CABIN, 'Cabin', { doorbells: [] })] };

    expect(await answerOf(page(), page().requests.doorbells({ entry: entry(HOME, 'Home') }))).toEqual({
      available: true,
      doorbells: [
        { deviceId: '1000001', name: 'Front Door', kind: 'lpd_v2', configured: false },
        { deviceId: '1000002', name: 'Back Door', kind: 'lpd_v2', configured: true },
      ],
    });
    expect(await answerOf(page(), page().requests.doorbells({ entry: entry(CABIN, 'Cabin') }))).toEqual({
      available: true,
      doorbells: [
        { deviceId: '2000001', name: 'Cabin Porch', kind: 'lpd_v2', configured: false },
        { deviceId: '2000002', name: 'Cabin Shed', kind: 'lpd_v2', configured: false },
      ],
    });
    expect(sim().requestsTo('devices').map(({ account }) => account)).toEqual([HOME.email, CABIN.email]);
    expect(sim().invalidRequests()).toEqual([]);
  });

  it('works the same for an account added in the form but not saved yet', async () => {
    // config.json still has the one account at the top; the form has moved it into accounts and added Cabin.
    page().block = { platform: 'DoorbellMotion', account: entry(HOME, 'Home').account, doorbellServerUrl: sim().doorbellUrl, doorbells: [{ deviceId: '1000001' }] };
    await signIn(CABIN, 'Cabin');

    const answer = await answerOf(page(), page().requests.doorbells({ entry: entry(CABIN, 'Cabin') }));
    expect(answer).toMatchObject({ available: true, doorbells: [{ deviceId: '2000001', configured: false }, { deviceId: '2000002', configured: false }] });
    expect(await answerOf(page(), page().requests.savedAccount({ entry: entry(CABIN, 'Cabin') }))).toEqual({});
  });

  it('signs one account out while the other stays signed in', async () => {
    await signIn(HOME, 'Home');
    await signIn(CABIN, 'Cabin');

    expect(await answerOf(page(), page().requests.signOut({ entry: entry(HOME, 'Home') }))).toEqual({ state: 'signed-out' });
    expect(await answerOf(page(), page().requests.account({ entry: entry(HOME, 'Home') }))).toEqual({ state: 'signed-out' });
    expect(await answerOf(page(), page().requests.account({ entry: entry(CABIN, 'Cabin') }))).toMatchObject({ state: 'signed-in', email: CABIN.email });
    expect(await exists(join(folderOf(CABIN), 'session.json'))).toBe(true);
  });

  it("moves the session of the one account at the top into its entry's folder once config.json has the entry: nobody signs in again", async () => {
    await page().requests.signIn({ serverUrl: sim().accountUrl, email: HOME.email, country: 'US', countryCode: '1', code: HOME.code });
    page().block = { platform: 'DoorbellMotion', accounts: [entry(HOME, 'Home'), entry(CABIN, 'Cabin')] };

    expect(await answerOf(page(), page().requests.account({ entry: entry(HOME, 'Home') }))).toMatchObject({ state: 'signed-in', email: HOME.email });
    expect(await exists(join(folderOf(HOME), 'session.json'))).toBe(true);
    expect(await exists(join(folderOf(HOME), 'installation.json'))).toBe(true);
    expect(await exists(join(page().storagePath, 'doorbell-motion', 'session.json'))).toBe(false);
    // Another account's entry never takes it.
    expect(await answerOf(page(), page().requests.account({ entry: entry(CABIN, 'Cabin') }))).toEqual({ state: 'signed-out' });
    expect(sim().account(HOME.email)?.tokens).toHaveLength(1);
  });

  it('reads that session where it is while the entry is only in the form: the running plugin still uses it there', async () => {
    await page().requests.signIn({ serverUrl: sim().accountUrl, email: HOME.email, country: 'US', countryCode: '1', code: HOME.code });
    page().block = { platform: 'DoorbellMotion', account: entry(HOME, 'Home').account, doorbellServerUrl: sim().doorbellUrl, doorbells: [{ deviceId: '1000001' }] };

    expect(await answerOf(page(), page().requests.account({ entry: entry(HOME, 'Home') }))).toMatchObject({ state: 'signed-in', email: HOME.email });
    expect(await answerOf(page(), page().requests.doorbells({ entry: entry(HOME, 'Home') }))).toMatchObject({ available: true, doorbells: [{ deviceId: '1000001', configured: true }, { deviceId: '1000002', configured: false }] });
    expect(await exists(join(page().storagePath, 'doorbell-motion', 'session.json'))).toBe(true);
    expect(await exists(folderOf(HOME))).toBe(false);
  });

  it("says which account's sign-in on the page the running plugin has yet to follow, by the account's label", async () => {
    await signIn(HOME, 'Home');
    await signIn(CABIN, 'Cabin');
    page().block = { platform: 'DoorbellMotion', accounts: [entry(HOME, 'Home'), entry(CABIN, 'Cabin')] };
    const folder = openAccountFolder(page().storagePath, accountKey({ account: { serverUrl: sim().accountUrl, email: HOME.email } }) as string, page().log);
    const homeSignedInAt = (await new SessionStore(folder, page().log).readSession())?.loggedInAt as string;
    // As the running plugin writes it: Home on the session it signed in with, Cabin still signed out.
    const now = new Date().toISOString();
    const session = (label: string, state: string, signedInAt: string | null) => ({ label, session: state, signedInAt, registeredAt: null, nextRefreshAt: null });
    const accounts = [session('Home', 'signed-in', homeSignedInAt), session('Cabin', 'signed-out', null), session('Gone', 'signed-out', null)];
    await writeFile(join(dataFolderPath(page().storagePath), 'status.json'), JSON.stringify({ pid: process.pid, startedAt: now, updatedAt: now, pushMode: 'relay', doorbells: [], accounts }));

    const answer = await answerOf(page(), page().requests.status());
    expect(answer).toMatchObject({ running: true, accounts: [accounts[0], { ...accounts[1], pageSignIn: 'waiting' }, accounts[2]] });
    expect((answer as { accounts: object[] }).accounts.filter((account) => 'pageSignIn' in account)).toHaveLength(1);
  });

  it('removes an account: signs it out and removes its folder, the other stays signed in', async () => {
    await signIn(HOME, 'Home');
    await signIn(CABIN, 'Cabin');

    expect(await answerOf(page(), page().requests.removeAccount({ entry: entry(CABIN, 'Cabin') }))).toEqual({ state: 'signed-out' });
    expect(await exists(folderOf(CABIN))).toBe(false);
    expect(await readdir(join(page().storagePath, 'doorbell-motion', 'accounts'))).toEqual([folderOf(HOME).split('/').at(-1)]);
    expect(await answerOf(page(), page().requests.account({ entry: entry(HOME, 'Home') }))).toMatchObject({ state: 'signed-in', email: HOME.email });
    expect(await failureOf(page(), page().requests.removeAccount({}))).toBe('Only an account of the list of accounts can be removed here.');
  });

  it("reads back the saved entry's account fields, never another entry's", async () => {
    page().block = { platform: 'DoorbellMotion', accounts: [entry(HOME, 'Home'), entry(CABIN, 'Cabin')] };

    expect(await answerOf(page(), page().requests.savedAccount({ entry: { account: { serverUrl: `${sim().accountUrl}/`, email: CABIN.email } } }))).toEqual({
      serverUrl: sim().accountUrl,
      email: CABIN.email,
      country: 'US',
      countryCode: '1',
    });
  });

  it("sends a test motion for a doorbell of the second account", async () => {
    const received: DoorbellNotification[] = [];
    const { receiverSecret } = await page().pushSecrets.secrets();
    const receiver = new PushReceiver({ host: '127.0.0.1', port: 0, secret: receiverSecret, log: page().log, onNotification: (n) => received.push(n) });
    receivers.push(receiver);
    const { port } = await receiver.start();
    page().block = {
      platform: 'DoorbellMotion',
      accounts: [entry(HOME, 'Home', { doorbells: [{ deviceId: '1000001' }] }), entry(CABIN, 'Cabin', { doorbells: [{ deviceId: '2000001', name: 'Cabin Porch' }] })],
      push: { host: '127.0.0.1', port, publicUrl: `http://127.0.0.1:${port}` },
    };

    expect(await answerOf(page(), page().requests.testMotion({ deviceId: '2000001' }))).toEqual({ delivered: true, status: 202 });
    expect(received).toEqual([{ deviceId: '2000001', kind: 'motion', id: expect.stringMatching(/^test-/) }]);
  });

  it("never says a token, a code or another account's e-mail in an answer", async () => {
    await signIn(HOME, 'Home');
    await signIn(CABIN, 'Cabin');
    page().block = { platform: 'DoorbellMotion', accounts: [entry(HOME, 'Home'), entry(CABIN, 'Cabin')] };
    const cabinAnswers = [
      await answerOf(page(), page().requests.account({ entry: entry(CABIN, 'Cabin') })),
      await answerOf(page(), page().requests.doorbells({ entry: entry(CABIN, 'Cabin') })),
      await answerOf(page(), page().requests.savedAccount({ entry: entry(CABIN, 'Cabin') })),
      await answerOf(page(), page().requests.signOut({ entry: entry(CABIN, 'Cabin') })),
    ];

    expect(JSON.stringify(cabinAnswers)).not.toContain(HOME.email);
    expect(JSON.stringify(cabinAnswers)).not.toMatch(/[0-9a-f]{12}/);
    expect(linesRevealing(everythingSaid(page()), sim().secrets)).toEqual([]);
  });
});

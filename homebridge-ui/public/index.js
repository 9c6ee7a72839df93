// The settings page: the account state, signing in and out, the account's doorbells to add, the
// status of the running plugin, the standard settings form, and a test motion per doorbell.
// Everything the server does is asked for with homebridge.request; its failures arrive as
// { message } in the words the plugin's log uses, with anything more the page must know (whether a
// sign-in's code is spent) as their `error`.

import { AccountDoorbells } from './account-doorbells.js';
import { ensurePlatformBlock, storeAccount, STORED_ACCOUNT_FIELDS } from './config-block.js';
import { busy, messageOf, showOutcome } from './outcomes.js';
import { startStatusPanel } from './status-panel.js';
import { showTestMotionDoorbells } from './test-motion.js';

/** The sign-in form's inputs, by the field the server and the config block call them. */
const SIGN_IN_INPUTS = {
  serverUrl: 'sign-in-server',
  email: 'sign-in-email',
  country: 'sign-in-country',
  countryCode: 'sign-in-country-code',
  code: 'sign-in-code',
};

const element = (id) => document.getElementById(id);

/** The settings form's block as it stands, saved or not. */
let currentBlock = {};

/** Asks the Status panel to follow a change of the account; nothing until the panel is started. */
let refreshStatus = () => undefined;

const accountDoorbells = new AccountDoorbells(
  { section: element('account-doorbells'), list: element('account-doorbell-list'), message: element('account-doorbells-message') },
  {
    // The service refused the session: the account state says so, and why, where the section was.
    onAccount: (account, reason) => {
      showAccount(account, { listDoorbells: false });
      showAccountMessage(reason, 'danger');
      refreshStatus();
    },
    onAdded: (block) => followForm(block),
  },
);

homebridge.addEventListener('ready', () => {
  start().catch((error) => showAccountMessage(messageOf(error), 'danger'));
});

async function start() {
  const block = await ensurePlatformBlock();
  prefillSignIn(block.account);
  followForm(block);
  homebridge.showSchemaForm();
  refreshStatus = startStatusPanel({
    summary: element('status-summary'),
    doorbells: element('status-doorbells'),
    outages: element('status-outages'),
    outageList: element('status-outage-list'),
  });
  // Edits in the settings form below: the lists of doorbells follow them.
  homebridge.addEventListener('configChanged', (event) => followForm(event.data?.[0] ?? {}));
  element('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void signIn();
  });
  element('sign-out').addEventListener('click', () => void signOut());
  showAccount(await homebridge.request('/account'));
}

function prefillSignIn(account = {}) {
  for (const field of STORED_ACCOUNT_FIELDS) {
    if (typeof account[field] === 'string') {
      element(SIGN_IN_INPUTS[field]).value = account[field];
    }
  }
}

function followForm(block) {
  currentBlock = block;
  showTestMotionDoorbells({ list: element('doorbells'), empty: element('no-doorbells') }, block);
  accountDoorbells.formChanged(block);
}

/** With a session or a doorbell access token, the account's doorbells are listed too, unless told not to. */
function showAccount(account, { listDoorbells = true } = {}) {
  const signedIn = account.state === 'signed-in';
  const token = account.state === 'token';
  element('account-state').textContent = describeAccount(account);
  element('sign-in-form').hidden = signedIn || token;
  element('signed-in-actions').hidden = !signedIn;
  element('token-note').hidden = !token;
  if (!signedIn && !token) {
    accountDoorbells.hide();
  } else if (listDoorbells) {
    void accountDoorbells.load(currentBlock);
  }
}

function describeAccount({ state, email, nickname, region, signedInAt }) {
  if (state === 'token') {
    return 'Using a doorbell access token';
  }
  if (state === 'expired') {
    return 'Session expired: sign in again';
  }
  if (state !== 'signed-in') {
    return 'Not signed in';
  }
  const who = nickname ? `${nickname} (${email})` : email;
  const since = new Date(signedInAt).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return `Signed in as ${who}${region ? `, region ${region}` : ''}, since ${since}`;
}

async function signIn() {
  const fields = Object.fromEntries(Object.entries(SIGN_IN_INPUTS).map(([field, id]) => [field, element(id).value.trim()]));
  await busy(element('sign-in'), element('account-message'), 'Signing in…', async () => {
    let account;
    try {
      account = await homebridge.request('/sign-in', fields);
    } catch (error) {
      // The server says whether the code is spent: pressing Sign in again must not send it again.
      if (error?.error?.codeSpent === true) {
        element(SIGN_IN_INPUTS.code).value = '';
      }
      showAccountMessage(messageOf(error), 'danger');
      homebridge.toast.error(messageOf(error), 'Sign-in failed');
      return;
    }
    element(SIGN_IN_INPUTS.code).value = '';
    // Listed once the account is saved: the server lists them from the saved settings.
    showAccount(account, { listDoorbells: false });
    refreshStatus();
    homebridge.toast.success(describeAccount(account), 'Doorbell Motion');
    try {
      await storeAccount(fields);
      showAccountMessage('Signed in. The account is saved in the settings below.', 'success');
    } catch (error) {
      showAccountMessage(`Signed in, but the account could not be saved in the settings (${messageOf(error)}): press Save below.`, 'danger');
    }
    void accountDoorbells.load(currentBlock);
  });
}

async function signOut() {
  await busy(element('sign-out'), element('account-message'), 'Signing out…', async () => {
    try {
      showAccount(await homebridge.request('/sign-out'));
      refreshStatus();
      showAccountMessage('Signed out.', 'success');
      homebridge.toast.success('Signed out', 'Doorbell Motion');
    } catch (error) {
      showAccountMessage(messageOf(error), 'danger');
      homebridge.toast.error(messageOf(error), 'Sign-out failed');
    }
  });
}

function showAccountMessage(text, tone) {
  showOutcome(element('account-message'), text, tone);
}

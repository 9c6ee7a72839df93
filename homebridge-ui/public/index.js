// The settings page: the account state, signing in and out, the account's doorbells to add, the
// status of the running plugin, the standard settings form, and a test motion per doorbell. Everything the server does is asked for with homebridge.request; its failures
// arrive as { message } in the words the plugin's log uses, with anything more the page must know
// (whether a sign-in's code is spent) as their `error`.

import { AccountDoorbells } from './account-doorbells.js';
import { ensurePlatformBlock, storeAccount, STORED_ACCOUNT_FIELDS } from './config-block.js';
import { startStatusPanel } from './status-panel.js';

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

const accountDoorbells = new AccountDoorbells(
  { section: element('account-doorbells'), list: element('account-doorbell-list'), message: element('account-doorbells-message') },
  {
    onAccount: (account) => showAccount(account, { listDoorbells: false }),
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
  startStatusPanel({ summary: element('status-summary'), doorbells: element('status-doorbells') });
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
  showDoorbells(block);
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
      showAccountMessage('Signed out.', 'success');
      homebridge.toast.success('Signed out', 'Doorbell Motion');
    } catch (error) {
      showAccountMessage(messageOf(error), 'danger');
      homebridge.toast.error(messageOf(error), 'Sign-out failed');
    }
  });
}

function showDoorbells(block) {
  const doorbells = (Array.isArray(block.doorbells) ? block.doorbells : []).filter((doorbell) => doorbell?.deviceId !== undefined);
  element('doorbells').replaceChildren(...doorbells.map(doorbellItem));
  // An empty list would still draw its border.
  element('doorbells').hidden = doorbells.length === 0;
  element('no-doorbells').hidden = doorbells.length > 0;
}

function doorbellItem(doorbell) {
  const deviceId = String(doorbell.deviceId);
  const name = doorbell.name || `Doorbell ${deviceId}`;
  const item = document.createElement('li');
  item.className = 'list-group-item';
  const row = document.createElement('div');
  row.className = 'd-flex align-items-center justify-content-between';
  const label = document.createElement('span');
  label.textContent = `${name} (${deviceId})`;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'btn btn-sm btn-outline-primary ms-3';
  button.textContent = 'Send test motion';
  button.setAttribute('aria-label', `Send test motion to ${name}`);
  const outcome = document.createElement('p');
  outcome.className = 'mb-0 mt-2 small';
  outcome.setAttribute('role', 'status');
  outcome.hidden = true;
  button.addEventListener('click', () => void sendTestMotion(deviceId, name, button, outcome));
  row.append(label, button);
  item.append(row, outcome);
  return item;
}

async function sendTestMotion(deviceId, name, button, outcome) {
  await busy(button, outcome, 'Sending…', async () => {
    try {
      const { warning } = await homebridge.request('/test-motion', { deviceId });
      if (warning === undefined) {
        showOutcome(outcome, `Delivered: ${name}'s motion sensor should now show motion.`, 'success');
      } else {
        showOutcome(outcome, `Delivered on this host: ${name}'s motion sensor should now show motion. ${warning}`, 'warning');
      }
      homebridge.toast.success(`Test motion delivered to ${name}`, 'Doorbell Motion');
    } catch (error) {
      showOutcome(outcome, messageOf(error), 'danger');
      homebridge.toast.error(messageOf(error), 'Test motion failed');
    }
  });
}

/** Disables the button and says what is going on until `run` is done; the last outcome goes meanwhile. */
async function busy(button, outcome, text, run) {
  const idle = button.textContent;
  outcome.hidden = true;
  button.disabled = true;
  button.textContent = text;
  try {
    await run();
  } finally {
    button.disabled = false;
    button.textContent = idle;
  }
}

function showAccountMessage(text, tone) {
  showOutcome(element('account-message'), text, tone);
}

function showOutcome(target, text, tone) {
  target.textContent = text;
  target.classList.remove('text-success', 'text-danger', 'text-warning');
  target.classList.add(`text-${tone}`);
  target.hidden = false;
}

/** homebridge.request rejects with the server's { message }; anything else is shown as it is. */
function messageOf(error) {
  return typeof error?.message === 'string' ? error.message : String(error);
}

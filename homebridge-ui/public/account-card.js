// One account's part of the page: its state, a sign-in form or Sign out, its doorbells to add and,
// for an entry of `accounts`, Remove account. The one account at the top of the block uses the page's
// Account section as index.html has it; each entry of `accounts` a copy of that section (copySection).

import { AccountDoorbells } from './account-doorbells.js';
import { removeAccountEntry, storeAccount, STORED_ACCOUNT_FIELDS } from './config-block.js';
import { busy, messageOf, showOutcome } from './outcomes.js';

/** The sign-in form's inputs, by the field the server and the config block call them. */
const SIGN_IN_INPUTS = {
  serverUrl: 'sign-in-server',
  email: 'sign-in-email',
  country: 'sign-in-country',
  countryCode: 'sign-in-country-code',
  code: 'sign-in-code',
};

/** The account state when the server could not tell it (the message under it says why). */
const NOT_CHECKED = 'The account could not be checked';

/** What a request for an entry carries of it: its own fields, never its doorbells. */
const ENTRY_FIELDS = ['label', 'account', 'doorbellServerUrl', 'doorbellAccessToken'];

/**
 * Marks every element of the section that has an id with that id as `data-part`, so that a copy finds
 * its parts as the original does. Called once, before the first copy.
 */
export function markParts(section) {
  for (const element of section.querySelectorAll('[id]')) {
    element.dataset.part = element.id;
  }
}

/**
 * A copy of the (marked) Account section for the `n`th account drawn: each id, and each label's `for`
 * and aria reference to it, gets `-<n>`, so that every input keeps its visible label.
 */
export function copySection(original, n) {
  const copy = original.cloneNode(true);
  copy.removeAttribute('id');
  copy.hidden = false;
  const rename = (value) => value.split(' ').map((id) => `${id}-${n}`).join(' ');
  for (const element of copy.querySelectorAll('[id]')) {
    element.id = `${element.id}-${n}`;
  }
  for (const attribute of ['for', 'aria-labelledby']) {
    for (const element of [copy, ...copy.querySelectorAll(`[${attribute}]`)]) {
      if (element.hasAttribute(attribute)) {
        element.setAttribute(attribute, rename(element.getAttribute(attribute)));
      }
    }
  }
  return copy;
}

export class AccountCard {
  /**
   * `section`: the Account section or a copy of it. `entry`: for an entry of `accounts`, `{ index,
   * entry, label }` as the form holds it; undefined for the one account at the top. `onChange` is
   * called after a sign-in or sign-out (the Status panel follows), `onForm` with the block an Add or a
   * removal left in the form.
   */
  constructor(section, { entry, onChange, onForm }) {
    this.section = section;
    this.entry = entry;
    this.onChange = onChange;
    this.onForm = onForm;
    this.identity = undefined;
    this.block = {};
    this.doorbells = new AccountDoorbells(
      { section: this.part('account-doorbells'), list: this.part('account-doorbell-list'), message: this.part('account-doorbells-message') },
      {
        // The service refused the session: the account state says so, and why, where the list was.
        onAccount: (account, reason) => {
          this.showAccount(account, { listDoorbells: false });
          this.showMessage(reason, 'danger');
          this.onChange();
        },
        onAdded: (block) => this.onForm(block),
        account: { index: entry?.index, body: () => this.body() },
      },
    );
    this.part('sign-in-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.signIn();
    });
    this.part('sign-out').addEventListener('click', () => void this.signOut());
    if (entry !== undefined) {
      this.part('remove-account').addEventListener('click', () => this.askToRemove());
      this.part('remove-cancelled').addEventListener('click', () => {
        this.part('remove-confirm').hidden = true;
        this.part('remove-account').disabled = false;
      });
      this.part('remove-confirmed').addEventListener('click', () => void this.remove());
    }
  }

  part(name) {
    return this.section.querySelector(`[data-part="${name}"]`);
  }

  /** What the server's requests carry for this account: nothing for the one at the top, else the entry's own fields. */
  body(extra = {}) {
    if (this.entry === undefined) {
      return Object.keys(extra).length === 0 ? undefined : extra;
    }
    const fields = Object.fromEntries(ENTRY_FIELDS.filter((field) => this.entry.entry[field] !== undefined).map((field) => [field, this.entry.entry[field]]));
    return { ...extra, entry: fields };
  }

  /**
   * The form changed: the entry (for an entry of `accounts`) and the block as they stand now. The
   * account's state is asked for again only when what names the account changed.
   */
  update(block, entry, { removable = false } = {}) {
    this.block = block;
    if (this.entry !== undefined && entry !== undefined) {
      this.entry = entry;
      this.part('account-heading').textContent = entry.label;
      this.part('token-note').textContent = "Alerts use this account's doorbell access token from the settings below: there is nothing to sign in to here.";
      this.part('account-remove').hidden = !removable;
      this.part('remove-question').textContent = `Remove ${entry.label}? It is signed out here, and its settings and doorbells leave the settings below.`;
    }
    this.doorbells.formChanged(block);
    const identity = JSON.stringify(this.body() ?? null);
    if (identity !== this.identity) {
      const first = this.identity === undefined;
      this.identity = identity;
      if (first || this.entry !== undefined) {
        void this.refresh();
      }
    }
  }

  /** Fills the sign-in form with the account fields of the block (or of `fallback`, the first account's, for a new one). */
  prefill(account = {}, fallback = {}) {
    for (const field of STORED_ACCOUNT_FIELDS) {
      const value = typeof account?.[field] === 'string' ? account[field] : field !== 'email' ? fallback?.[field] : undefined;
      if (typeof value === 'string') {
        this.part(SIGN_IN_INPUTS[field]).value = value;
      }
    }
  }

  async refresh() {
    try {
      this.showAccount(await homebridge.request('/account', this.body()));
    } catch (error) {
      // "Checking the account…" would promise an answer that is not coming; the message says why.
      this.part('account-state').textContent = NOT_CHECKED;
      this.showMessage(messageOf(error), 'danger');
    }
  }

  /** With a session or a doorbell access token, the account's doorbells are listed too, unless told not to. */
  showAccount(account, { listDoorbells = true } = {}) {
    const signedIn = account.state === 'signed-in';
    const token = account.state === 'token';
    this.part('account-state').textContent = describeAccount(account);
    this.part('sign-in-form').hidden = signedIn || token;
    this.part('signed-in-actions').hidden = !signedIn;
    this.part('token-note').hidden = !token;
    if (!signedIn && !token) {
      this.doorbells.hide();
    } else if (listDoorbells) {
      void this.doorbells.load(this.block);
    }
  }

  async signIn() {
    const fields = Object.fromEntries(Object.entries(SIGN_IN_INPUTS).map(([field, name]) => [field, this.part(name).value.trim()]));
    const codeInput = this.part(SIGN_IN_INPUTS.code);
    await busy(this.part('sign-in'), this.part('account-message'), 'Signing in…', async () => {
      let account;
      try {
        account = await homebridge.request('/sign-in', this.body(fields));
      } catch (error) {
        // The server says whether the code is spent: pressing Sign in again must not send it again.
        if (error?.error?.codeSpent === true) {
          codeInput.value = '';
        }
        this.showMessage(messageOf(error), 'danger');
        homebridge.toast.error(messageOf(error), 'Sign-in failed');
        return;
      }
      codeInput.value = '';
      // Listed once the account is saved: the server lists them from the saved settings.
      this.showAccount(account, { listDoorbells: false });
      this.onChange();
      homebridge.toast.success(describeAccount(account), 'Doorbell Motion');
      try {
        await storeAccount(fields, this.entry?.index);
        this.showMessage('Signed in. The account is saved in the settings below.', 'success');
      } catch (error) {
        this.showMessage(`Signed in, but the account could not be saved in the settings (${messageOf(error)}): press Save below.`, 'danger');
      }
      if (this.entry === undefined) {
        void this.doorbells.load(this.block);
        return;
      }
      // The entry now holds the account: what the page asks for from here on names it, and its
      // doorbells are listed once the state is asked for under that name.
      const [block] = await homebridge.getPluginConfig();
      this.onForm(block);
    });
  }

  async signOut() {
    await busy(this.part('sign-out'), this.part('account-message'), 'Signing out…', async () => {
      try {
        this.showAccount(await homebridge.request('/sign-out', this.body()));
        this.onChange();
        this.showMessage('Signed out.', 'success');
        homebridge.toast.success('Signed out', 'Doorbell Motion');
      } catch (error) {
        this.showMessage(messageOf(error), 'danger');
        homebridge.toast.error(messageOf(error), 'Sign-out failed');
      }
    });
  }

  /** The page's own question, in place: the Homebridge UI's frame may not show the browser's confirm(). */
  askToRemove() {
    this.part('remove-confirm').hidden = false;
    this.part('remove-account').disabled = true;
    this.part('remove-confirmed').focus();
  }

  async remove() {
    await busy(this.part('remove-confirmed'), this.part('account-message'), 'Removing…', async () => {
      try {
        await homebridge.request('/remove-account', this.body());
        const block = await removeAccountEntry(this.entry.index);
        homebridge.toast.success(`${this.entry.label} removed`, 'Doorbell Motion');
        this.onChange();
        this.onForm(block);
      } catch (error) {
        this.showMessage(messageOf(error), 'danger');
        homebridge.toast.error(messageOf(error), 'Remove account failed');
      }
    });
  }

  showMessage(text, tone) {
    showOutcome(this.part('account-message'), text, tone);
  }

  dispose() {
    this.section.remove();
  }
}

export function describeAccount({ state, email, nickname, region, signedInAt }) {
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

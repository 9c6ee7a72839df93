// The settings page: the account state, signing in and out, the account's doorbells to add (one
// section per account with several), the status of the running plugin, the standard settings form,
// and a test motion per doorbell. Everything the server does is asked for with homebridge.request;
// its failures arrive as { message } in the words the plugin's log uses, with anything more the page
// must know (whether a sign-in's code is spent) as their `error`.

import { AccountCard, copySection, markParts } from './account-card.js';
import { accountEntries, addAccountEntry, ensurePlatformBlock } from './config-block.js';
import { busy, messageOf, showOutcome } from './outcomes.js';
import { startStatusPanel } from './status-panel.js';
import { showTestMotionDoorbells } from './test-motion.js';

const element = (id) => document.getElementById(id);

/** The Account section as index.html has it, before anything is drawn in it: what each account's section copies. */
const accountSection = element('account-section');
markParts(accountSection);
const pristineSection = accountSection.cloneNode(true);

/** Asks the Status panel to follow a change of an account; nothing until the panel is started. */
let refreshStatus = () => undefined;

const onChange = () => refreshStatus();

/** The one account at the top of the block, in the Account section itself. */
const topCard = new AccountCard(accountSection, { entry: undefined, onChange, onForm: (block) => followForm(block) });

/** With `accounts`: one card per entry, in the order of the list. */
let entryCards = [];

/** How many sections have been drawn: each copy's ids are made unique with it. */
let drawn = 0;

homebridge.addEventListener('ready', () => {
  start().catch((error) => topCard.showMessage(messageOf(error), 'danger'));
});

async function start() {
  const block = await ensurePlatformBlock();
  topCard.prefill(block.account);
  followForm(block);
  homebridge.showSchemaForm();
  refreshStatus = startStatusPanel({
    summary: element('status-summary'),
    doorbells: element('status-doorbells'),
    outages: element('status-outages'),
    outageList: element('status-outage-list'),
  });
  // Edits in the settings form below: the accounts and lists of doorbells follow them.
  homebridge.addEventListener('configChanged', (event) => followForm(event.data?.[0] ?? {}));
  element('add-account').addEventListener('click', () => void addAccount());
}

/**
 * The form's block, saved or not: without `accounts`, the Account section as always; with it, one
 * section per entry (drawn anew when entries come or go, else told what changed).
 */
function followForm(block) {
  const entries = accountEntries(block);
  const labels = labelsOf(entries.map(({ entry }) => entry));
  accountSection.hidden = entries.length > 0;
  element('accounts').hidden = entries.length === 0;
  if (entries.length === 0) {
    dropEntryCards();
    topCard.update(block);
  } else {
    if (entryCards.length !== entries.length || entryCards.some((card, at) => card.entry.index !== entries[at].index)) {
      drawEntryCards(entries, labels);
    }
    entryCards.forEach((card, at) => card.update(block, { ...entries[at], label: labels[at] }, { removable: entries.length > 1 }));
  }
  const doorbells = entries.length === 0 ? block.doorbells : entries.flatMap(({ entry }) => (Array.isArray(entry.doorbells) ? entry.doorbells : []));
  showTestMotionDoorbells({ list: element('doorbells'), empty: element('no-doorbells') }, { doorbells });
}

function drawEntryCards(entries, labels) {
  dropEntryCards();
  const first = entries[0].entry.account;
  entryCards = entries.map(({ entry, index }, at) => {
    drawn += 1;
    const section = copySection(pristineSection, drawn);
    element('accounts').append(section);
    const card = new AccountCard(section, { entry: { entry, index, label: labels[at] }, onChange, onForm: (updated) => followForm(updated) });
    card.prefill(entry.account, first);
    return card;
  });
}

function dropEntryCards() {
  entryCards.forEach((card) => card.dispose());
  entryCards = [];
}

/** Each entry's label as the plugin gives it: its own, trimmed, or `Account <n>` with the smallest n no other uses. */
function labelsOf(entries) {
  const given = entries.map(({ label }) => (typeof label === 'string' && label.trim() !== '' ? label.trim() : undefined));
  const used = new Set(given.filter(Boolean).map((label) => label.toLowerCase()));
  let n = 1;
  return given.map((label) => {
    if (label !== undefined) {
      return label;
    }
    while (used.has(`account ${n}`)) {
      n += 1;
    }
    used.add(`account ${n}`);
    return `Account ${n}`;
  });
}

async function addAccount() {
  const message = element('add-account-message');
  await busy(element('add-account'), message, 'Adding…', async () => {
    try {
      followForm(await addAccountEntry());
      entryCards.at(-1)?.section.scrollIntoView({ block: 'nearest' });
    } catch (error) {
      showOutcome(message, messageOf(error), 'danger');
    }
  });
}

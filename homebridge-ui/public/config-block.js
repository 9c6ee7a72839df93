// The plugin's platform block as the page reads and writes it through the Homebridge UI: the block
// the settings form is drawn from, and the account a sign-in stores in it and in config.json.

const PLATFORM = 'DoorbellMotion';
const DEFAULT_NAME = 'Doorbell Motion';

/** The account fields a sign-in stores in the config block: never the code. */
export const STORED_ACCOUNT_FIELDS = ['serverUrl', 'email', 'country', 'countryCode'];

/** How long a stored account may take to show up in config.json, and how often to look. */
const SAVE_TIMEOUT_MS = 5_000;
const SAVE_POLL_MS = 250;

/** The keys of the one account at the top of the block, which an entry of `accounts` holds instead. */
const TOP_LEVEL_ACCOUNT_KEYS = ['account', 'doorbellServerUrl', 'doorbellAccessToken', 'doorbells'];

/** The schema's node for an entry of `accounts` and for a doorbell, to tell the form's blank ones; read once. */
let schemaNodes = {};

/**
 * The settings form is drawn only for an existing block: a first visit creates one. Device ids
 * written as JSON integers, which the plugin accepts, become text, as the form checks them and would
 * otherwise mark them wrong (its Save writes them as text anyway). The blank entries the form leaves
 * in `accounts` go (see withoutBlankEntries). Nothing is saved here.
 */
export async function ensurePlatformBlock() {
  const schema = await homebridge.getPluginConfigSchema().catch(() => undefined);
  const accounts = schema?.schema?.properties?.accounts;
  const properties = schema?.schema?.properties;
  schemaNodes = { entry: accounts?.items, doorbell: properties?.doorbells?.items, account: properties?.account, doorbells: properties?.doorbells };
  const [found] = await homebridge.getPluginConfig();
  const block = found ?? { platform: PLATFORM, name: DEFAULT_NAME };
  const doorbells = Array.isArray(block.doorbells) ? block.doorbells.map(withDeviceIdAsText) : undefined;
  const changed = doorbells?.some((doorbell, index) => doorbell !== block.doorbells[index]) ?? false;
  const cleaned = withoutBlankEntries(changed ? { ...block, doorbells } : block);
  if (found !== undefined && !changed && cleaned === block) {
    return block;
  }
  await homebridge.updatePluginConfig([withKeysRemoved(cleaned, block)]);
  return cleaned;
}

/**
 * The Homebridge UI merges a block it is given into the one it holds (Object.assign): a key left out
 * would stay as it was. A key of `current` the block no longer has is given as undefined, which the
 * UI's save then leaves out of config.json.
 */
function withKeysRemoved(block, current) {
  const removed = Object.keys(current ?? {}).filter((key) => !Object.hasOwn(block, key));
  return { ...Object.fromEntries(removed.map((key) => [key, undefined])), ...block };
}

/**
 * Whether a value holds nothing but the schema's defaults: what the settings form puts in an array
 * item by itself. The form keeps one blank entry in `accounts` even in a block with one account, and
 * saves it, one more at each save; the plugin ignores them, and the page never writes them.
 */
export function isFormBlank(value, node) {
  if (node === undefined) {
    return false;
  }
  if (node.default !== undefined && JSON.stringify(value) === JSON.stringify(node.default)) {
    return true;
  }
  if (Array.isArray(value) && node.items?.type === 'object') {
    return value.every((item) => isFormBlank(item, node.items));
  }
  const { properties } = node;
  return value !== null && typeof value === 'object' && !Array.isArray(value) && properties !== undefined
    && Object.entries(value).every(([key, child]) => Object.hasOwn(properties, key) && isFormBlank(child, properties[key]));
}

/** The block's entries of `accounts` that hold something of their own, each with its place in the list. */
export function accountEntries(block) {
  const entries = Array.isArray(block?.accounts) ? block.accounts : [];
  return entries.map((entry, index) => ({ entry, index })).filter(({ entry }) => entry !== null && typeof entry === 'object' && !isFormBlank(entry, schemaNodes.entry));
}

/** The list without the form's blank doorbells; the very list when it has none. */
function withoutBlankDoorbells(doorbells) {
  if (!Array.isArray(doorbells)) {
    return doorbells;
  }
  const kept = doorbells.filter((doorbell) => !isFormBlank(doorbell, schemaNodes.doorbell));
  return kept.length === doorbells.length ? doorbells : kept;
}

/**
 * The block without what the settings form adds by itself: blank entries in `accounts` (the key goes
 * with the last of them) and blank doorbells in any list; beside accounts, a top-level account of
 * defaults only. The very block when there is nothing to leave out.
 */
export function withoutBlankEntries(block) {
  if (block === null || typeof block !== 'object') {
    return block;
  }
  const updated = { ...block };
  let changed = false;
  const doorbells = withoutBlankDoorbells(block.doorbells);
  if (doorbells !== block.doorbells) {
    updated.doorbells = doorbells;
    changed = true;
  }
  if (Array.isArray(block.accounts)) {
    const kept = accountEntries(block).map(({ entry }) => {
      const own = withoutBlankDoorbells(entry.doorbells);
      return own === entry.doorbells ? entry : { ...entry, doorbells: own };
    });
    if (kept.length !== block.accounts.length || kept.some((entry, at) => entry !== block.accounts[at])) {
      changed = true;
    }
    if (kept.length === 0) {
      delete updated.accounts;
    } else {
      updated.accounts = kept;
      // Beside accounts, the top-level keys the form fills by itself mean nothing.
      for (const key of ['account', 'doorbells']) {
        const value = updated[key];
        if (value !== undefined && ((Array.isArray(value) && value.length === 0) || isFormBlank(value, schemaNodes[key]))) {
          delete updated[key];
          changed = true;
        }
      }
    }
  }
  return changed ? updated : block;
}

/**
 * Writes the block into the settings form, blank entries left out. The form is hidden meanwhile, as
 * for storeAccount; `save`: config.json too.
 */
async function writeBlock(block, { save = false } = {}) {
  const updated = withoutBlankEntries(block);
  const [current] = await homebridge.getPluginConfig();
  homebridge.hideSchemaForm();
  try {
    await homebridge.updatePluginConfig([withKeysRemoved(updated, current)]);
    if (save) {
      await homebridge.savePluginConfig();
    }
  } finally {
    homebridge.showSchemaForm();
  }
  return updated;
}

/** `Account <n>` for a new entry: the smallest n that no entry's label uses, given or by default (as the plugin gives them). */
function nextLabel(entries) {
  const used = new Set(entries.map(({ label }) => (typeof label === 'string' ? label.trim().toLowerCase() : '')).filter(Boolean));
  const smallestFree = () => {
    let n = 1;
    while (used.has(`account ${n}`)) {
      n += 1;
    }
    used.add(`account ${n}`);
    return `Account ${n}`;
  };
  for (const { label } of entries) {
    if (typeof label !== 'string' || label.trim() === '') {
      smallestFree();
    }
  }
  return smallestFree();
}

/**
 * Appends an entry to `accounts`, labelled `Account <n>`, on the doorbell server of the first. A block
 * with the one account at the top first moves its keys into the first entry, every value kept, as a
 * block cannot have both. Nothing is saved: signing in on the new account's section does that.
 */
export async function addAccountEntry() {
  const [block = { platform: PLATFORM, name: DEFAULT_NAME }] = await homebridge.getPluginConfig();
  let entries = accountEntries(block).map(({ entry }) => entry);
  const rest = { ...block };
  if (entries.length === 0) {
    const first = {};
    for (const key of TOP_LEVEL_ACCOUNT_KEYS) {
      if (rest[key] !== undefined) {
        first[key] = rest[key];
      }
      delete rest[key];
    }
    entries = [first];
  }
  const added = { label: nextLabel(entries) };
  if (typeof entries[0].doorbellServerUrl === 'string') {
    added.doorbellServerUrl = entries[0].doorbellServerUrl;
  }
  return writeBlock({ ...rest, accounts: [...entries, added] });
}

/** Takes the entry at `index` of `accounts` out of the form and config.json. */
export async function removeAccountEntry(index) {
  const [block] = await homebridge.getPluginConfig();
  const accounts = Array.isArray(block?.accounts) ? block.accounts.filter((_, at) => at !== index) : [];
  const updated = await writeBlock({ ...block, accounts }, { save: true });
  await untilSaved(() => homebridge.request('/saved-account', { entry: block.accounts[index] }), (saved) => Object.keys(saved).length === 0);
  return updated;
}

/**
 * The plugin's rule (a safe JSON integer counts as its digits) written again: the browser loads only
 * this folder, never the plugin's own modules.
 */
function withDeviceIdAsText(doorbell) {
  return Number.isSafeInteger(doorbell?.deviceId) ? { ...doorbell, deviceId: String(doorbell.deviceId) } : doorbell;
}

/**
 * The account fields go into the config block and config.json at once, so the settings form shows
 * them and a later Save of it keeps them. A code in the block is dropped: it is spent or stale.
 *
 * The form is hidden meanwhile. Updating the config while the Homebridge UI shows its form makes it
 * redraw the form a moment later, empty, and take the empty values as the config: a Save would then
 * write a block with no doorbells. Shown again, the form is drawn from the updated block.
 */
export async function storeAccount(fields, index) {
  const [block = { platform: PLATFORM, name: DEFAULT_NAME }] = await homebridge.getPluginConfig();
  const holder = index === undefined ? block : (block.accounts?.[index] ?? {});
  const account = { ...holder.account };
  delete account.code;
  for (const field of STORED_ACCOUNT_FIELDS) {
    account[field] = fields[field];
  }
  if (index === undefined) {
    await writeBlock({ ...block, account }, { save: true });
  } else {
    const accounts = block.accounts.map((entry, at) => (at === index ? { ...entry, account } : entry));
    await writeBlock({ ...block, accounts }, { save: true });
  }
  // An entry's account is found in config.json by its own fields, wherever it is in the list.
  const body = index === undefined ? undefined : { entry: { account } };
  await untilSaved(
    () => homebridge.request('/saved-account', body),
    (saved) => STORED_ACCOUNT_FIELDS.every((field) => saved[field] === account[field]),
  );
}

/**
 * The Homebridge UI answers savePluginConfig before it has written config.json, and never says
 * whether that worked: the page reads config.json back until it holds what was saved.
 */
async function untilSaved(read, holds) {
  const deadline = Date.now() + SAVE_TIMEOUT_MS;
  for (;;) {
    if (holds(await read())) {
      return;
    }
    if (Date.now() >= deadline) {
      throw new Error(`config.json did not hold it after ${SAVE_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => window.setTimeout(resolve, SAVE_POLL_MS));
  }
}

/** The device ids of the block's doorbells (with `index`, of that entry of `accounts`), as text. */
export function formDeviceIds(block, index) {
  const holder = index === undefined ? block : block?.accounts?.[index];
  const doorbells = Array.isArray(holder?.doorbells) ? holder.doorbells : [];
  return new Set(doorbells.map((doorbell) => doorbell?.deviceId).filter((id) => id !== undefined && id !== null).map(String));
}

/**
 * Adds a doorbell of the account to the settings form: its device id as text (an id above 2^53 would
 * not survive a number) and its name. Nothing is saved: the form's Save does that. A doorbell the
 * form already holds is not added again. The form is hidden meanwhile, as for storeAccount.
 */
export async function addDoorbell({ deviceId, name }, index) {
  const [block = { platform: PLATFORM, name: DEFAULT_NAME }] = await homebridge.getPluginConfig();
  if (formDeviceIds(block, index).has(deviceId)) {
    return block;
  }
  const withDoorbell = (holder) => ({ ...holder, doorbells: [...(Array.isArray(holder?.doorbells) ? holder.doorbells : []), { deviceId, name }] });
  if (index === undefined) {
    return writeBlock(withDoorbell(block));
  }
  return writeBlock({ ...block, accounts: block.accounts.map((entry, at) => (at === index ? withDoorbell(entry) : entry)) });
}

// The plugin's platform block as the page reads and writes it through the Homebridge UI: the block
// the settings form is drawn from, and the account a sign-in stores in it and in config.json.

const PLATFORM = 'DoorbellMotion';
const DEFAULT_NAME = 'Doorbell Motion';

/** The account fields a sign-in stores in the config block: never the code. */
export const STORED_ACCOUNT_FIELDS = ['serverUrl', 'email', 'country', 'countryCode'];

/** How long a stored account may take to show up in config.json, and how often to look. */
const SAVE_TIMEOUT_MS = 5_000;
const SAVE_POLL_MS = 250;

/**
 * The settings form is drawn only for an existing block: a first visit creates one. Device ids
 * written as JSON integers, which the plugin accepts, become text, as the form checks them and would
 * otherwise mark them wrong (its Save writes them as text anyway). Nothing is saved here.
 */
export async function ensurePlatformBlock() {
  const [found] = await homebridge.getPluginConfig();
  const block = found ?? { platform: PLATFORM, name: DEFAULT_NAME };
  const doorbells = Array.isArray(block.doorbells) ? block.doorbells.map(withDeviceIdAsText) : undefined;
  const changed = doorbells?.some((doorbell, index) => doorbell !== block.doorbells[index]) ?? false;
  if (found !== undefined && !changed) {
    return block;
  }
  const updated = changed ? { ...block, doorbells } : block;
  await homebridge.updatePluginConfig([updated]);
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
export async function storeAccount(fields) {
  const [block = { platform: PLATFORM, name: DEFAULT_NAME }] = await homebridge.getPluginConfig();
  const account = { ...block.account };
  delete account.code;
  for (const field of STORED_ACCOUNT_FIELDS) {
    account[field] = fields[field];
  }
  homebridge.hideSchemaForm();
  try {
    await homebridge.updatePluginConfig([{ ...block, account }]);
    await homebridge.savePluginConfig();
  } finally {
    homebridge.showSchemaForm();
  }
  await untilSaved(account);
}

/**
 * The Homebridge UI answers savePluginConfig before it has written config.json, and never says
 * whether that worked: the page reads the account back from the file until it is there.
 */
async function untilSaved(account) {
  const deadline = Date.now() + SAVE_TIMEOUT_MS;
  for (;;) {
    const saved = await homebridge.request('/saved-account');
    if (STORED_ACCOUNT_FIELDS.every((field) => saved[field] === account[field])) {
      return;
    }
    if (Date.now() >= deadline) {
      throw new Error(`config.json did not hold it after ${SAVE_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => window.setTimeout(resolve, SAVE_POLL_MS));
  }
}

/** The device ids of the block's doorbells, as text. */
export function formDeviceIds(block) {
  const doorbells = Array.isArray(block?.doorbells) ? block.doorbells : [];
  return new Set(doorbells.map((doorbell) => doorbell?.deviceId).filter((id) => id !== undefined && id !== null).map(String));
}

/**
 * Adds a doorbell of the account to the settings form: its device id as text (an id above 2^53 would
 * not survive a number) and its name. Nothing is saved: the form's Save does that. A doorbell the
 * form already holds is not added again. The form is hidden meanwhile, as for storeAccount.
 */
export async function addDoorbell({ deviceId, name }) {
  const [block = { platform: PLATFORM, name: DEFAULT_NAME }] = await homebridge.getPluginConfig();
  const doorbells = Array.isArray(block.doorbells) ? block.doorbells : [];
  if (formDeviceIds(block).has(deviceId)) {
    return block;
  }
  const updated = { ...block, doorbells: [...doorbells, { deviceId, name }] };
  homebridge.hideSchemaForm();
  try {
    await homebridge.updatePluginConfig([updated]);
  } finally {
    homebridge.showSchemaForm();
  }
  return updated;
}

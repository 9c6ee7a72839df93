// The Test motion list: each doorbell of the settings form with a button that sends it a motion alert
// through the server's /test-motion, the way the doorbell service would, and what came of it.

import { busy, messageOf, showOutcome } from './outcomes.js';

/** Lists the block's doorbells in `list`; `empty` says what to do while there are none. */
export function showTestMotionDoorbells({ list, empty }, block) {
  const doorbells = (Array.isArray(block.doorbells) ? block.doorbells : []).filter((doorbell) => doorbell?.deviceId !== undefined);
  list.replaceChildren(...doorbells.map(doorbellItem));
  // An empty list would still draw its border.
  list.hidden = doorbells.length === 0;
  empty.hidden = doorbells.length > 0;
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

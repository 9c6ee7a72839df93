// The account's doorbells under the account state, from the doorbell service's list (the server's
// /doorbells), each with an Add button that puts it into the settings form below, device id as text.

import { addDoorbell, formDeviceIds } from './config-block.js';
import { messageOf } from './outcomes.js';

export class AccountDoorbells {
  /** The last listing; undefined until one arrived. */
  listing;
  /** Adds wait their turn, so two quick clicks never add a doorbell twice. */
  adding = Promise.resolve();

  /**
   * `elements`: the section, its list and its message line. `onAccount` is told the account state a
   * refused session turned into, and why: the section goes with the session, so the reason is
   * shown elsewhere. `onAdded` is told the settings block an Add left in the form. `account`: for an
   * entry of `accounts`, its place in the form's list and what the server's requests carry for it.
   */
  constructor(elements, { onAccount, onAdded, account = { index: undefined, body: () => undefined } }) {
    this.elements = elements;
    this.onAccount = onAccount;
    this.onAdded = onAdded;
    this.account = account;
    this.inForm = new Set();
  }

  /** Asks the server for the list and shows it; failures are shown in the section's message line. */
  async load(block) {
    this.inForm = formDeviceIds(block, this.account.index);
    this.elements.section.hidden = false;
    this.listing = undefined;
    this.render();
    this.say("Looking up the account's doorbells…", 'muted');
    try {
      const answer = await homebridge.request('/doorbells', this.account.body());
      if (answer.account !== undefined) {
        this.onAccount(answer.account, answer.reason);
        return;
      }
      if (!answer.available) {
        // A refused access token is a problem to fix; a service without the list is just so.
        this.say(answer.reason, answer.refused === true ? 'danger' : 'muted');
        return;
      }
      this.listing = answer.doorbells;
      this.say(answer.doorbells.length === 0 ? 'The doorbell service lists no doorbells for this account.' : '', 'muted');
      this.render();
    } catch (error) {
      this.say(messageOf(error), 'danger');
    }
  }

  hide() {
    this.elements.section.hidden = true;
    this.listing = undefined;
  }

  /** The settings form changed: what it holds is marked anew. */
  formChanged(block) {
    this.inForm = formDeviceIds(block, this.account.index);
    this.render();
  }

  render() {
    const doorbells = this.listing ?? [];
    this.elements.list.replaceChildren(...doorbells.map((doorbell) => this.item(doorbell)));
    this.elements.list.hidden = doorbells.length === 0;
  }

  item(doorbell) {
    const item = document.createElement('li');
    item.className = 'list-group-item d-flex align-items-center justify-content-between';
    const label = document.createElement('div');
    const name = document.createElement('div');
    name.textContent = doorbell.name;
    const details = document.createElement('div');
    details.className = 'small text-muted';
    details.textContent = `Device ID ${doorbell.deviceId}${doorbell.kind ? ` · ${doorbell.kind}` : ''}`;
    label.append(name, details);
    item.append(label, this.action(doorbell));
    return item;
  }

  /** A mark for a doorbell already in the saved settings or the unsaved form; an Add button otherwise. */
  action(doorbell) {
    if (doorbell.configured || this.inForm.has(doorbell.deviceId)) {
      const mark = document.createElement('span');
      mark.className = 'badge bg-secondary ms-3';
      mark.textContent = doorbell.configured ? 'In your settings' : 'Added: press Save below';
      return mark;
    }
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-sm btn-outline-primary ms-3';
    button.textContent = 'Add';
    button.setAttribute('aria-label', `Add ${doorbell.name}`);
    button.addEventListener('click', () => {
      // Disabled before anything waits: a second click in the same moment does nothing.
      button.disabled = true;
      this.adding = this.adding.then(() => this.add(doorbell));
    });
    return button;
  }

  async add(doorbell) {
    try {
      const block = await addDoorbell(doorbell, this.account.index);
      this.inForm = formDeviceIds(block, this.account.index);
      this.onAdded(block);
      this.say(`${doorbell.name} is in the settings below: press Save, then restart Homebridge when the Homebridge UI offers it.`, 'success');
    } catch (error) {
      this.say(`${doorbell.name} could not be added to the settings: ${messageOf(error)}`, 'danger');
    }
    this.render();
  }

  say(text, tone) {
    const { message } = this.elements;
    message.textContent = text;
    message.className = `mt-2 mb-0 small text-${tone}`;
    message.hidden = text === '';
  }
}

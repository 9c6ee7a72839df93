import { randomInt } from 'node:crypto';

/** ntfy's alphabet for message ids (and the ids of open and keepalive lines). */
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

const ID_LENGTH = 12;

const MESSAGE_ID = /^[A-Za-z0-9]{12}$/;

export function randomMessageId(): string {
  let id = '';
  for (let index = 0; index < ID_LENGTH; index += 1) {
    id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  }
  return id;
}

/** Whether `text` has the form of a message id; ntfy reads `since=` as an id before anything else. */
export function isMessageId(text: string): boolean {
  return MESSAGE_ID.test(text);
}

import { STATUS_CODES } from 'node:http';
import type { Reply } from '../incoming.js';
import { goJsonLine } from './go-json.js';

/**
 * ntfy's error answer, fields in the order ntfy writes them: `code` is more precise than the status,
 * `http` repeats the status, `link` points into ntfy's documentation when ntfy has a page for it.
 */
export interface NtfyError {
  code: number;
  http: number;
  error: string;
  link?: string;
}

const AUTH_DOCS = 'https://ntfy.sh/docs/publish/#authentication';
const LIMITS_DOCS = 'https://ntfy.sh/docs/publish/#limitations';

export const NOT_FOUND: NtfyError = { code: 40401, http: 404, error: 'page not found' };
export const UNAUTHORIZED: NtfyError = { code: 40101, http: 401, error: 'unauthorized', link: AUTH_DOCS };
export const FORBIDDEN: NtfyError = { code: 40301, http: 403, error: 'forbidden', link: AUTH_DOCS };
export const SINCE_INVALID: NtfyError = {
  code: 40008,
  http: 400,
  error: 'invalid since parameter',
  link: 'https://ntfy.sh/docs/subscribe/api/#fetch-cached-messages',
};
/** What an ntfy without an attachment cache answers a body it would have to store as a file. */
export const ATTACHMENTS_DISALLOWED: NtfyError = {
  code: 40014,
  http: 400,
  error: 'invalid request: attachments not allowed',
  link: 'https://ntfy.sh/docs/config/#attachments',
};
export const TOO_MANY_REQUESTS: NtfyError = { code: 42901, http: 429, error: 'limit reached: too many requests', link: LIMITS_DOCS };
export const INTERNAL_ERROR: NtfyError = { code: 50001, http: 500, error: 'internal server error' };
export const NO_RATE_VISITOR: NtfyError = {
  code: 50701,
  http: 507,
  error: 'cannot publish to UnifiedPush topic without previously active subscriber',
};

const KNOWN_BY_STATUS: ReadonlyMap<number, NtfyError> = new Map(
  [NOT_FOUND, UNAUTHORIZED, FORBIDDEN, TOO_MANY_REQUESTS, INTERNAL_ERROR, NO_RATE_VISITOR].map((error) => [error.http, error]),
);

/**
 * ntfy's own error for a status when it has one; otherwise (a 502 or 503, which only a proxy in front
 * of ntfy would send) the same shape with code status×100+1 and the status's name.
 */
export function errorForStatus(status: number): NtfyError {
  return KNOWN_BY_STATUS.get(status) ?? { code: status * 100 + 1, http: status, error: (STATUS_CODES[status] ?? 'error').toLowerCase() };
}

/** ntfy allows any origin by default, on errors as on success. */
export const CORS_HEADERS: Readonly<Record<string, string>> = { 'access-control-allow-origin': '*' };

export function errorReply(error: NtfyError, headers: Record<string, string> = {}): Reply {
  return { status: error.http, headers: { 'content-type': 'application/json', ...CORS_HEADERS, ...headers }, body: goJsonLine(error) };
}

/** A publish the relay refused, thrown by the in-process `publish()`. */
export class RelayPublishError extends Error {
  override readonly name = 'RelayPublishError';

  constructor(readonly error: NtfyError) {
    super(`the relay refused the publish: HTTP ${error.http} (${error.code}) ${error.error}`);
  }
}

import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Simulator } from '../../simulator/index.js';
import { listen } from '../../simulator/servers.js';

/**
 * A plain node:http client for the simulator's tests: exact control over every header line (an array
 * value sends the header once per element), no keep-alive, nothing added behind the test's back.
 */

export interface SendOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  body?: string;
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export function send(url: string, { method = 'POST', headers = {}, body }: SendOptions = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, agent: false, timeout: 10_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('test request timed out')));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export function json(response: Response): Record<string, unknown> {
  return JSON.parse(response.text) as Record<string, unknown>;
}

/** Valid requests of each route, built by hand so the tests do not depend on the plugin's clients. */
export const ACCOUNT = { email: 'a+b@example.com', code: '012345', country: 'DE', countryCode: '49' };

export function regionUrl(simulator: Simulator, query = `email=${encodeURIComponent(ACCOUNT.email)}&needtwostepauth=false`): string {
  return `${simulator.accountUrl}/api/v1/getUrlByEmail?${query}`;
}

const LETTERS_AND_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function freshMercyKs(): string {
  return [...randomBytes(16)].map((byte) => LETTERS_AND_DIGITS[byte % LETTERS_AND_DIGITS.length]).join('');
}

/** The seven client headers with a fresh x-mercy-ks; `overrides` replace or (undefined) drop headers. */
export function loginHeaders(overrides: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  const ks = freshMercyKs();
  const headers: OutgoingHttpHeaders = {
    header_clientid: 'test-client-1',
    header_clientlang: 'en',
    'x-mercy-ks': ks,
    'x-mercy-k': createHash('sha256').update(ks).digest('hex'),
    header_appversion: '4.54.02',
    header_phonesystem: 'Android',
    header_phonemodel: 'Pixel 7',
    'content-type': 'application/x-www-form-urlencoded',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined));
}

export function loginForm(overrides: Record<string, string> = {}): string {
  const fields = { code: ACCOUNT.code, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode, email: ACCOUNT.email, majorVersion: '14', minorVersion: '0', ...overrides };
  return new URLSearchParams(fields).toString();
}

export function login(simulator: Simulator, options: { headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<Response> {
  return send(`${simulator.regionUrl}/api/v4/auth/email/login/code`, { headers: options.headers ?? loginHeaders(), body: options.body ?? loginForm() });
}

/** Signs ACCOUNT in (it must have an unspent code) and returns the session token. */
export async function signIn(simulator: Simulator): Promise<string> {
  const response = await login(simulator);
  return (json(response).data as { token: string }).token;
}

/** Signs another account in with its own e-mail and code; the session token. */
export async function signInAs(simulator: Simulator, { email, code }: { email: string; code: string }): Promise<string> {
  const response = await login(simulator, { body: loginForm({ email, code }) });
  return (json(response).data as { token: string }).token;
}

/** GET /clients_api/ring_devices with the token. */
export function listDevices(simulator: Simulator, token: string): Promise<Response> {
  return send(`${simulator.doorbellUrl}/clients_api/ring_devices`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
}

export function registrationBody(pushToken: string): string {
  return JSON.stringify({ device: { metadata: { pn_dict_version: '2.0.0', pn_service: 'webhook' }, os: 'linux', push_notification_token: pushToken } });
}

export function register(simulator: Simulator, token: string, body = registrationBody('http://127.0.0.1:9/push/secret'), contentType = 'application/json'): Promise<Response> {
  return send(`${simulator.doorbellUrl}/clients_api/device`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body,
  });
}

export function subscribe(simulator: Simulator, token: string, deviceId: string, extra: SendOptions = {}): Promise<Response> {
  return send(`${simulator.doorbellUrl}/clients_api/doorbots/${deviceId}/motions_subscribe`, {
    body: extra.body,
    headers: { authorization: `Bearer ${token}`, ...extra.headers },
  });
}

/**
 * A tiny loopback push receiver that records what the simulator delivers, answering `status` and
 * `reply`; `pushToken` is the one to register: `<origin>/push/<secret>`.
 */
export async function startReceiver(status = 202, reply = '{"accepted":true}') {
  const deliveries: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = await listen('127.0.0.1', 0, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(status, { 'content-type': 'application/json' }).end(reply);
    });
  });
  return { pushToken: `${server.url}/push/receiver-secret`, deliveries, close: () => server.close() };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

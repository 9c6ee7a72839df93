import { request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

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

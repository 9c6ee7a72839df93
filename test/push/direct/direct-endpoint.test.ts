/**
 * The direct endpoint's life on a real loopback port: a receiver started once, and never one left
 * listening after close.
 */
import { afterEach, expect, it } from '@jest/globals';
import { SecretMaskingLogger } from '../../../src/log.js';
import { DirectEndpoint } from '../../../src/push/direct/endpoint.js';
import type { PushSecrets } from '../../../src/session/push-secrets.js';
import { createTestLogger } from '../../../scripts/lib/homebridge-api.js';
import { portIsFree } from '../../../scripts/lib/platform-harness.js';
import { freeLoopbackPort } from '../../../scripts/lib/homebridge-config.js';

const HOST = '127.0.0.1';
const secrets: PushSecrets = { receiverSecret: 's'.repeat(43), relayTopic: 'up000000000000' };

let endpoint: DirectEndpoint | undefined;

afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

function newEndpoint(port: number, readSecrets: () => Promise<PushSecrets>): DirectEndpoint {
  const publicUrl = `http://${HOST}:${port}`;
  endpoint = new DirectEndpoint({ host: HOST, port, publicUrl }, readSecrets, new SecretMaskingLogger(createTestLogger()), () => undefined);
  return endpoint;
}

it('starts one receiver for overlapping opens, and close frees its port', async () => {
  const port = await freeLoopbackPort();
  const directEndpoint = newEndpoint(port, async () => secrets);

  const tokens = await Promise.all([directEndpoint.open(), directEndpoint.open()]);

  expect(tokens).toEqual([`http://${HOST}:${port}/push/${secrets.receiverSecret}`, `http://${HOST}:${port}/push/${secrets.receiverSecret}`]);
  await expect(portIsFree(port)).resolves.toBe(false);
  await directEndpoint.close();
  await expect(portIsFree(port)).resolves.toBe(true);
});

it('listens on no port when closed while an open is still reading push.json', async () => {
  const port = await freeLoopbackPort();
  let release: (value: PushSecrets) => void = () => undefined;
  const directEndpoint = newEndpoint(port, () => new Promise((resolve) => (release = resolve)));

  const opening = directEndpoint.open();
  const closing = directEndpoint.close();
  release(secrets);
  await closing;

  await expect(opening).rejects.toThrow('The push receiver is closed.');
  await expect(portIsFree(port)).resolves.toBe(true);
});

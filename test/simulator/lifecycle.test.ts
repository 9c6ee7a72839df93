import { describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../../simulator/index.js';
import { send } from './http.js';
import { ACCOUNT, register, registrationBody, regionUrl, signIn } from './requests.js';

/** How many TCP sockets and servers are alive in this process. */
function networkHandles(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'TCPSocketWrap').length;
}

/**
 * Handles close a moment after their owner did; waits up to a second for the count to fall back to
 * `baseline`. It may fall below it: other test files of the same worker may still be closing theirs.
 */
async function settledNetworkHandles(baseline: number): Promise<number> {
  for (let attempt = 0; attempt < 50 && networkHandles() > baseline; attempt += 1) {
    await sleep(20);
  }
  return networkHandles();
}

describe('simulator: lifecycle', () => {
  it('closes all servers and idle keep-alive connections promptly, leaving no handle behind', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const agent = new Agent({ keepAlive: true });
    try {
      const outgoing = request(regionUrl(simulator), { method: 'POST', agent }).end();
      const [socket] = (await once(outgoing, 'socket')) as [Socket];
      const [response] = (await once(outgoing, 'response')) as [IncomingMessage];
      await once(response.resume(), 'end');
      // The connection now idles in the agent's keep-alive pool, which server.close() alone would wait on.
      const socketClosed = once(socket, 'close');

      const started = Date.now();
      await simulator.close();

      expect(Date.now() - started).toBeLessThan(1000);
      await socketClosed;
      await expect(send(regionUrl(simulator))).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
      await simulator.close();
    }
    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('closes idle keep-alive connections on closeIdleConnections(), and goes on serving', async () => {
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const agent = new Agent({ keepAlive: true });
    try {
      const outgoing = request(regionUrl(simulator), { method: 'POST', agent }).end();
      const [socket] = (await once(outgoing, 'socket')) as [Socket];
      const [response] = (await once(outgoing, 'response')) as [IncomingMessage];
      await once(response.resume(), 'end');
      const socketClosed = once(socket, 'close');

      simulator.closeIdleConnections();

      await socketClosed;
      expect((await send(regionUrl(simulator))).status).toBe(200);
    } finally {
      agent.destroy();
      await simulator.close();
    }
  });

  it('closes a connection whose request is still arriving', async () => {
    const simulator = await startSimulator();
    const { hostname, port } = new URL(simulator.accountUrl);
    const socket = createConnection({ host: hostname, port: Number(port) });
    try {
      await once(socket, 'connect');
      socket.write('POST /api/v1/getUrlByEmail HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"half":');
      const socketClosed = once(socket, 'close');
      await sleep(50);

      const started = Date.now();
      await simulator.close();

      expect(Date.now() - started).toBeLessThan(1000);
      await socketClosed;
    } finally {
      socket.destroy();
      await simulator.close();
    }
  });

  it('ends a pending fault delay and an unanswered delivery on close()', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    // The push token points at a route of a second simulator that is delayed for a minute: a receiver that never answers.
    const silent = await startSimulator();
    try {
      silent.injectFault('subscribe', { delayMs: 60_000 });
      await register(simulator, await signIn(simulator), registrationBody(`${silent.doorbellUrl}/clients_api/doorbots/1/motions_subscribe`));
      simulator.injectFault('region', { delayMs: 60_000 });
      const delayed = send(regionUrl(simulator));
      const delivery = simulator.deliverMotion('1234567');
      await sleep(100);

      await simulator.close();

      await expect(delayed).rejects.toThrow();
      expect(await delivery).toEqual({ status: 0, body: '' });
      expect(simulator.requestsTo('region')[0].status).toBe(0);
    } finally {
      await silent.close();
    }
    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('refuses a non-loopback bind address', async () => {
    await expect(startSimulator({ host: '0.0.0.0' })).rejects.toThrow('loopback addresses only');
    await expect(startSimulator({ host: '192.168.1.20' })).rejects.toThrow('loopback addresses only');
  });

  it('refuses invalid accounts and doorbell ids', async () => {
    await expect(startSimulator({ doorbells: ['0'] })).rejects.toThrow(TypeError);
    await expect(startSimulator({ accounts: [{ email: 'a@example.com', code: '12345' }] })).rejects.toThrow('code must be 6 digits');
  });

  it('rejects when a port is taken and closes the servers it already started', async () => {
    const holder = await startSimulator();
    const baseline = networkHandles();
    const takenPort = Number(new URL(holder.doorbellUrl).port);

    await expect(startSimulator({ ports: { doorbell: takenPort } })).rejects.toThrow(/EADDRINUSE/);

    expect(await settledNetworkHandles(baseline)).toBeLessThanOrEqual(baseline);
    await holder.close();
  });
});

import { describe, expect, it } from '@jest/globals';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../../simulator/index.js';
import { send } from './http.js';
import { ACCOUNT, register, registrationBody, regionUrl, signIn } from './requests.js';

/** Sockets and servers alive in this process, by kind. */
function networkHandles(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'TCPSocketWrap').length;
}

/** Handles close a moment after their owner did; waits up to a second for the count to settle. */
async function settledNetworkHandles(expected: number): Promise<number> {
  for (let attempt = 0; attempt < 50 && networkHandles() !== expected; attempt += 1) {
    await sleep(20);
  }
  return networkHandles();
}

describe('simulator: lifecycle', () => {
  it('closes all servers and idle keep-alive connections promptly, leaving no handle behind', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      request(regionUrl(simulator), { method: 'POST', agent }, (response) => response.resume().on('end', resolve)).on('error', reject).end();
    });
    expect(networkHandles()).toBeGreaterThan(baseline + 3);

    const started = Date.now();
    await simulator.close();
    agent.destroy();

    expect(Date.now() - started).toBeLessThan(1000);
    expect(await settledNetworkHandles(baseline)).toBe(baseline);
  });

  it('ends a pending fault delay and an unanswered delivery on close()', async () => {
    const baseline = networkHandles();
    const simulator = await startSimulator({ accounts: [ACCOUNT] });
    const silent = await startSimulator();
    // A push token pointing at a route that is delayed for a minute: the receiver never answers.
    silent.injectFault('register', { delayMs: 60_000 });
    await register(simulator, await signIn(simulator), registrationBody(`${silent.doorbellUrl}/clients_api/device`));
    simulator.injectFault('region', { delayMs: 60_000 });
    const delayed = send(regionUrl(simulator));
    const delivery = simulator.deliverMotion('1234567');
    await sleep(50);

    await simulator.close();

    await expect(delayed).rejects.toThrow();
    expect(await delivery).toEqual({ status: 0, body: '' });
    expect(simulator.requestsTo('region')[0].status).toBe(0);
    await silent.close();
    expect(await settledNetworkHandles(baseline)).toBe(baseline);
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

    expect(await settledNetworkHandles(baseline)).toBe(baseline);
    await holder.close();
  });
});

/**
 * One Matter controller across the runs of one Homebridge storage: the first run commissions the
 * bridge with the manual pairing code Homebridge logs; later runs find the fabric in the controller's
 * own storage and reconnect without commissioning, as a phone does after the bridge restarts.
 */
import { join } from 'node:path';
import { MATTER_PORT, START_TIMEOUT_MS, type HomebridgeSandbox } from '../homebridge-sandbox.js';
import type { MatterRuntime } from '../homebridge-versions.js';
import { MatterTestClient } from './matter-client.js';
import type { PrivateHomebridge } from './private-network.js';

/** Homebridge logs it while the bridge waits to be commissioned: `1234-567-8901`. */
export const PAIRING_CODE_LINE = /Manual Pairing Code: (\d{4}-\d{3}-\d{4})/;

/** Loading matter.js, commissioning and reading every endpoint, on a slow machine. */
export const CONNECT_TIMEOUT_MS = 60_000;

export class MatterControllerRuns {
  private commissioned = false;

  constructor(
    private readonly runtime: MatterRuntime,
    private readonly sandbox: HomebridgeSandbox,
  ) {}

  /** Where the controller keeps its fabric: beside the sandbox's folders, outside what Homebridge may write. */
  get storagePath(): string {
    return join(this.sandbox.root, 'matter-controller');
  }

  /** Starts this run's controller, commissions the bridge unless an earlier run did, and reads it. */
  async connect({ homebridge, channel }: PrivateHomebridge): Promise<MatterTestClient> {
    const client = new MatterTestClient(channel);
    await client.start({ matterRoot: await this.runtime.matterRoot(), storagePath: this.storagePath, bridgePort: MATTER_PORT });
    if (!this.commissioned) {
      const [, pairingCode] = await homebridge.waitForLine(PAIRING_CODE_LINE, START_TIMEOUT_MS);
      await client.commission(pairingCode);
      this.commissioned = true;
    }
    await client.connect();
    return client;
  }
}

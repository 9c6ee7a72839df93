/**
 * The Matter rig itself, on a bare bridge (no plugin): Homebridge 2 with Matter on, inside a private
 * network, is commissioned by a matter.js controller with the manual pairing code from its log, and
 * after a restart the controller reconnects without commissioning again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HomebridgeSandbox, STOP_TIMEOUT_MS } from './support/homebridge-sandbox.js';
import { MATTER_RUNTIMES, RUNTIME_SETUP_TIMEOUT_MS } from './support/homebridge-versions.js';
import { MatterDeviceType } from './support/matter/matter-client.js';
import { CONNECT_TIMEOUT_MS, MatterControllerRuns } from './support/matter/matter-controller-runs.js';
import { problemLines } from './support/log-problems.js';

const NO_PORTS = { inboundPorts: [], outboundPorts: [] };

/** Homebridge's line when a controller adds the bridge to its fabric. */
const COMMISSIONED_LINE = /\[Matter\/Server\] Bridge commissioned/;

describe.each(MATTER_RUNTIMES)('$label with Matter on, in a private network', (runtime) => {
  let sandbox: HomebridgeSandbox;
  let controller: MatterControllerRuns;

  beforeAll(async () => {
    await runtime.binary();
    sandbox = await HomebridgeSandbox.create({ matter: true });
    await sandbox.writeConfig();
    controller = new MatterControllerRuns(runtime, sandbox);
  }, RUNTIME_SETUP_TIMEOUT_MS);

  afterAll(() => sandbox.dispose(), STOP_TIMEOUT_MS * 2);

  it(
    'is commissioned with the manual pairing code from its log and shows a root node and an empty aggregator',
    async () => {
      const run = await sandbox.startInPrivateNetwork(runtime, sandbox.noPluginsPath, NO_PORTS);
      const client = await controller.connect(run);

      const endpoints = await client.endpoints();
      expect(endpoints.map(({ deviceTypes }) => deviceTypes)).toEqual([[MatterDeviceType.RootNode], [MatterDeviceType.Aggregator]]);
      await run.homebridge.stop(STOP_TIMEOUT_MS);
    },
    CONNECT_TIMEOUT_MS,
  );

  it(
    'is found again after a restart without being commissioned again',
    async () => {
      const run = await sandbox.startInPrivateNetwork(runtime, sandbox.noPluginsPath, NO_PORTS);
      const client = await controller.connect(run);

      expect((await client.endpoints()).map(({ endpoint }) => endpoint)).toEqual([0, 1]);
      expect(run.homebridge.lines.filter((line) => COMMISSIONED_LINE.test(line))).toEqual([]);
      const stopped = await run.homebridge.stop(STOP_TIMEOUT_MS);
      expect(stopped).toMatchObject({ killed: false });
    },
    CONNECT_TIMEOUT_MS,
  );

  it('commissioned the bridge once, logged no warning, error or stack trace, and wrote nothing outside its storage', async () => {
    expect(sandbox.outputLines.filter((line) => COMMISSIONED_LINE.test(line))).toHaveLength(1);
    expect(problemLines(sandbox.outputLines)).toEqual([]);
    expect(await sandbox.writesOutsideStorage()).toEqual([]);
  });
});

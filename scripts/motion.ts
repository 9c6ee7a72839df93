/**
 * `npm run motion -- <deviceId>`: has the running demo's simulator (or a running `npm run simulator`)
 * deliver a notification to the plugin's push address (the relay, or the receiver in direct mode), as
 * the push delivery service would, and says what that address answered. The doorbell may belong to
 * any of the simulator's accounts; one shared by several goes once to each account subscribed to it.
 */
import { parseArgs } from 'node:util';
import type { AccountDelivery, ControlAccountState, DeliveryResult } from '../simulator/index.js';
import { DETECTION_OF_SUBTYPE } from '../src/push/notification.js';
import { DETECTIONS, type Detection } from '../src/values/detection.js';
import { demoDir, readDemoInfo, type DemoDoorbell, type DemoInfo } from './lib/demo-folder.js';
import { parseCommandLine } from '../simulator/cli.js';

const USAGE = [
  'usage: npm run motion -- <deviceId> [--kind motion|ding] [--detection person|vehicle|package|animal|other] [--id EVENT_ID] [--dir PATH | --simulator URL]',
  '  <deviceId>   a doorbell of any of the simulator\'s accounts; one shared by several accounts goes to each subscribed to it',
  '  --kind       motion (default) drives the motion sensor; ding rings: it presses the doorbell button (once in 5 s at most)',
  '  --detection  what the motion saw, as the doorbell service reports it: also turns on that sensor',
  '  --id         the event id; the plugin drops a repeated id within 10 minutes as a duplicate',
  '  --dir        the demo folder given to `npm start`; default .demo/',
  '  --simulator  instead of a demo: the doorbell address a running `npm run simulator` printed (http://127.0.0.1:<port>)',
].join('\n');

const KINDS = ['motion', 'ding'];

/** The simulator gives the push address 5 s to answer; this covers that and the control request. */
const REQUEST_TIMEOUT_MS = 10_000;

/** From the control API when no push address is registered yet. */
const NOT_REGISTERED = 409;

interface MotionRequest {
  deviceId: string;
  kind: string;
  detection: Detection | undefined;
  id: string | undefined;
  dir: string;
  /** The control address of a simulator run on its own, instead of the demo's. */
  simulator: string | undefined;
}

/** What the control API answers for a motion: the leading answer and, from a simulator with accounts, each delivery. */
type MotionAnswer = DeliveryResult & { deliveries?: AccountDelivery[] };

/** A failure this script explains in full; anything else is a bug and keeps its stack. */
class MotionFailure extends Error {}

function parseRequest(args: string[]): MotionRequest {
  const { values, positionals } = parseArgs({
    args,
    options: {
      kind: { type: 'string', default: 'motion' },
      detection: { type: 'string' },
      id: { type: 'string' },
      dir: { type: 'string' },
      simulator: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length !== 1) {
    throw new Error('Give exactly one doorbell device id.');
  }
  if (!KINDS.includes(values.kind)) {
    throw new Error(`--kind must be one of ${KINDS.join(', ')}.`);
  }
  const detection = DETECTIONS.find((candidate) => candidate === values.detection);
  if (values.detection !== undefined && (detection === undefined || values.kind !== 'motion')) {
    throw new Error(`--detection goes with a motion and must be one of ${DETECTIONS.join(', ')}.`);
  }
  if (values.simulator !== undefined && (values.dir !== undefined || !/^https?:\/\/[^/]+\/?$/.test(values.simulator))) {
    throw new Error('--simulator takes the address a running simulator printed as "doorbell" (http://127.0.0.1:<port>), and no --dir.');
  }
  return { deviceId: positionals[0], kind: values.kind, detection, id: values.id, dir: demoDir(values.dir), simulator: values.simulator?.replace(/\/$/, '') };
}

/** The service's own word for the detection (`human` for a person), as it sends it beside the kind. */
function subtypeOf(detection: Detection): string | undefined {
  return [...DETECTION_OF_SUBTYPE].find(([, detected]) => detected === detection)?.[0];
}

async function runningDemo(dir: string): Promise<DemoInfo> {
  const info = await readDemoInfo(dir);
  if (info === undefined) {
    throw new MotionFailure(`The demo is not running (no demo.json in ${dir}). Start it with \`npm start\` and try again.`);
  }
  return info;
}

/**
 * Each account's doorbells and subscriptions, from the simulator's control API; undefined from a
 * simulator that predates accounts of their own.
 */
async function simulatorAccounts(controlUrl: string): Promise<ControlAccountState[] | undefined> {
  const response = await control(controlUrl, '/__simulator/accounts', { method: 'GET' });
  if (response.status === 404) {
    return undefined;
  }
  const { accounts } = (await response.json()) as { accounts: ControlAccountState[] };
  return accounts;
}

/**
 * The doorbell's name for the messages: the demo's name for it, else `Doorbell <id>` when one of the
 * simulator's accounts holds it, has subscribed it or accepts any id. Throws, naming the doorbells
 * there are, when none does.
 */
function doorbellName(deviceId: string, demo: DemoDoorbell[], accounts: ControlAccountState[] | undefined): string {
  const named = demo.find((candidate) => candidate.deviceId === deviceId);
  if (named !== undefined) {
    return named.name;
  }
  const held = accounts?.some(({ doorbells, subscribedDoorbells }) => doorbells === null || doorbells.includes(deviceId) || subscribedDoorbells.includes(deviceId));
  if (held) {
    return `Doorbell ${deviceId}`;
  }
  const known = [
    ...demo.map(({ deviceId: id, name }) => `${id} (${name})`),
    ...(accounts ?? []).flatMap(({ email, doorbells }) => (doorbells ?? []).filter((id) => !demo.some((doorbell) => doorbell.deviceId === id)).map((id) => `${id} (${email})`)),
  ];
  const unique = [...new Set(known)].join(', ');
  throw new MotionFailure(demo.length > 0 ? `${deviceId} is not one of the demo's doorbells: ${unique}.` : `${deviceId} is not a doorbell of any of the simulator's accounts: ${unique}.`);
}

/** A control API request; a simulator that is not there is explained, not thrown as a bug. */
async function control(controlUrl: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${controlUrl}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      throw new MotionFailure(`The simulator did not answer within ${REQUEST_TIMEOUT_MS / 1000} s at ${controlUrl}.`);
    }
    throw new MotionFailure(`The demo is not running: nothing answers at ${controlUrl}. Start it with \`npm start\` (or \`npm run simulator\`) and try again.`);
  }
}

async function deliver(controlUrl: string, { deviceId, kind, detection, id }: MotionRequest): Promise<MotionAnswer> {
  const response = await control(controlUrl, `/__simulator/motion/${deviceId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind, id, subtype: detection === undefined ? undefined : subtypeOf(detection) }),
  });
  const answer = (await response.json()) as MotionAnswer & { reason?: string };
  if (response.status === NOT_REGISTERED) {
    throw new MotionFailure('The plugin has not registered for push notifications yet: wait until the demo prints the pairing code.');
  }
  if (!response.ok) {
    throw new MotionFailure(`The simulator refused the delivery (${response.status}): ${answer.reason ?? 'no reason given'}`);
  }
  return answer;
}

function delivered({ status }: DeliveryResult): boolean {
  return status >= 200 && status <= 299;
}

function describeDelivery({ status, body }: DeliveryResult): string {
  if (status === 0) {
    return 'the push address could not be reached';
  }
  const reply = body.trim();
  return `the push address answered ${status}${reply === '' || reply.startsWith('{') ? '' : ` ${reply}`}`;
}

function motionNote(name: string, detection: Detection | undefined): string {
  if (detection === undefined) {
    return `The demo logs "Motion at ${name}"; the sensor turns off again after the motion timeout.`;
  }
  return `The demo logs "Motion at ${name} (${detection})"; with a ${detection} sensor, it turns on beside the main one, both off again after the motion timeout.`;
}

/** Where the simulator is, and the demo's doorbells (none for a simulator run on its own). */
async function target(request: MotionRequest): Promise<{ controlUrl: string; doorbells: DemoDoorbell[] }> {
  if (request.simulator !== undefined) {
    return { controlUrl: request.simulator, doorbells: [] };
  }
  const info = await runningDemo(request.dir);
  return { controlUrl: info.controlUrl, doorbells: info.doorbells };
}

async function main(): Promise<void> {
  const request = parseCommandLine(parseRequest, USAGE);
  if (request === undefined) {
    return;
  }
  try {
    const { controlUrl, doorbells } = await target(request);
    const accounts = await simulatorAccounts(controlUrl);
    const name = doorbellName(request.deviceId, doorbells, accounts);
    const answer = await deliver(controlUrl, request);
    const what = request.detection === undefined ? request.kind : `${request.kind} (${request.detection})`;
    const deliveries = answer.deliveries ?? [];
    if (deliveries.length > 1) {
      // A doorbell shared by several accounts: one notification per account subscribed to it.
      const lines = deliveries.map((delivery) => `  ${delivery.account}: ${describeDelivery(delivery)}`);
      const outcome = `${what} for ${request.deviceId} (${name}) to ${deliveries.length} subscriptions:\n${lines.join('\n')}`;
      if (!deliveries.every(delivered)) {
        throw new MotionFailure(`Could not deliver ${outcome}`);
      }
      console.log(`Delivered ${outcome}`);
    } else {
      const outcome = `${what} for ${request.deviceId} (${name}): ${describeDelivery(answer)}`;
      if (!delivered(answer)) {
        throw new MotionFailure(`Could not deliver ${outcome}`);
      }
      console.log(`Delivered ${outcome}`);
    }
    console.log(request.kind === 'motion' ? motionNote(name, request.detection) : `The demo logs "Doorbell rang at ${name}"; the Home app announces the ring.`);
  } catch (error) {
    if (!(error instanceof MotionFailure)) {
      throw error;
    }
    console.error(error.message);
    process.exitCode = 1;
  }
}

await main();

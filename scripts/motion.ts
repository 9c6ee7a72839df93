/**
 * `npm run motion -- <deviceId>`: has the running demo's simulator deliver a notification to the
 * plugin's push address (the relay, or the receiver in direct mode), as the push delivery service
 * would, and says what that address answered.
 */
import { parseArgs } from 'node:util';
import type { DeliveryResult } from '../simulator/index.js';
import { DETECTION_OF_SUBTYPE } from '../src/push/notification.js';
import { DETECTIONS, type Detection } from '../src/values/detection.js';
import { demoDir, readDemoInfo, type DemoDoorbell, type DemoInfo } from './lib/demo-folder.js';
import { parseCommandLine } from '../simulator/cli.js';

const USAGE = [
  'usage: npm run motion -- <deviceId> [--kind motion|ding] [--detection person|vehicle|package|animal|other] [--id EVENT_ID] [--dir PATH]',
  '  --kind       motion (default) drives the motion sensor; ding rings: it presses the doorbell button (once in 5 s at most)',
  '  --detection  what the motion saw, as the doorbell service reports it: also turns on that sensor',
  '  --id         the event id; the plugin drops a repeated id within 10 minutes as a duplicate',
  '  --dir        the demo folder given to `npm start`; default .demo/',
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
}

/** A failure this script explains in full; anything else is a bug and keeps its stack. */
class MotionFailure extends Error {}

function parseRequest(args: string[]): MotionRequest {
  const { values, positionals } = parseArgs({
    args,
    options: { kind: { type: 'string', default: 'motion' }, detection: { type: 'string' }, id: { type: 'string' }, dir: { type: 'string' } },
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
  return { deviceId: positionals[0], kind: values.kind, detection, id: values.id, dir: demoDir(values.dir) };
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

function demoDoorbell(info: DemoInfo, deviceId: string): DemoDoorbell {
  const doorbell = info.doorbells.find((candidate) => candidate.deviceId === deviceId);
  if (doorbell === undefined) {
    const known = info.doorbells.map(({ deviceId: id, name }) => `${id} (${name})`).join(', ');
    throw new MotionFailure(`${deviceId} is not one of the demo's doorbells: ${known}.`);
  }
  return doorbell;
}

async function deliver(controlUrl: string, { deviceId, kind, detection, id }: MotionRequest): Promise<DeliveryResult> {
  let response: Response;
  try {
    response = await fetch(`${controlUrl}/__simulator/motion/${deviceId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind, id, subtype: detection === undefined ? undefined : subtypeOf(detection) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      throw new MotionFailure(`The demo did not answer within ${REQUEST_TIMEOUT_MS / 1000} s at ${controlUrl}.`);
    }
    throw new MotionFailure(`The demo is not running: nothing answers at ${controlUrl}. Start it with \`npm start\` and try again.`);
  }
  const answer = (await response.json()) as DeliveryResult & { reason?: string };
  if (response.status === NOT_REGISTERED) {
    throw new MotionFailure('The plugin has not registered for push notifications yet: wait until the demo prints the pairing code.');
  }
  if (!response.ok) {
    throw new MotionFailure(`The simulator refused the delivery (${response.status}): ${answer.reason ?? 'no reason given'}`);
  }
  return answer;
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

async function main(): Promise<void> {
  const request = parseCommandLine(parseRequest, USAGE);
  if (request === undefined) {
    return;
  }
  try {
    const info = await runningDemo(request.dir);
    const doorbell = demoDoorbell(info, request.deviceId);
    const delivery = await deliver(info.controlUrl, request);
    const what = request.detection === undefined ? request.kind : `${request.kind} (${request.detection})`;
    const outcome = `${what} for ${doorbell.deviceId} (${doorbell.name}): ${describeDelivery(delivery)}`;
    if (delivery.status < 200 || delivery.status > 299) {
      throw new MotionFailure(`Could not deliver ${outcome}`);
    }
    console.log(`Delivered ${outcome}`);
    console.log(request.kind === 'motion' ? motionNote(doorbell.name, request.detection) : `The demo logs "Doorbell rang at ${doorbell.name}"; the Home app announces the ring.`);
  } catch (error) {
    if (!(error instanceof MotionFailure)) {
      throw error;
    }
    console.error(error.message);
    process.exitCode = 1;
  }
}

await main();

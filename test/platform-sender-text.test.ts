/**
 * Text a stranger chose reaches the log cut and escaped: a notification's kind of 10 KB, with
 * newlines and terminal escapes, sent through the real receiver, gives one short debug line whether
 * its doorbell is configured or not.
 */
import { expect, it } from '@jest/globals';
import { DOORBELLS, waitFor } from './support/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from './support/platform-testbed.js';

const [FRONT] = DOORBELLS.map((doorbell) => doorbell.deviceId) as [string];

/** A forged line, a screen-clearing escape, a colour, then 10 KB more, a carriage return and a C1 escape. */
const HOSTILE_KIND = `ding\nMotion at Front Door\u001b[2J\u001b[31m${'x'.repeat(10_000)}\r\u009b`;
/** Its first 64 characters, escaped as JSON and quoted, with an ellipsis for the rest. */
const QUOTED_KIND = `"ding\\nMotion at Front Door\\u001b[2J\\u001b[31m${'x'.repeat(30)}…"`;

const testbed = usePlatformTestbed();

it('logs a hostile kind as one short line, cut and escaped, at a configured doorbell and an unknown one', async () => {
  const platform = testbed.launch();
  await waitFor(() => allConfirmed(platform), 'subscriptions');
  const unknownDoorbell = JSON.stringify({ device_id: 4242, kind: HOSTILE_KIND });

  expect((await testbed.sim.deliverMotion(FRONT, { kind: HOSTILE_KIND })).status).toBe(202);
  expect((await testbed.sim.deliverMotion(FRONT, { rawBody: unknownDoorbell })).status).toBe(202);

  const ignored = platform.log.lines.filter(({ message }) => message.startsWith('Ignored a'));
  expect(ignored).toEqual([
    { level: 'debug', message: `Ignored a ${QUOTED_KIND} notification at Front Door` },
    { level: 'debug', message: `Ignored a ${QUOTED_KIND} notification for doorbell 4242: not configured` },
  ]);
  const raw = ['\n', '\r', '\u001b', '\u009b', 'x'.repeat(31)];
  const unsafe = platform.log.lines.filter(({ message }) => raw.some((text) => message.includes(text)));
  expect(unsafe).toEqual([]);
});

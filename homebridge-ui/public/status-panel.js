// The Status panel: what the plugin running in Homebridge last wrote about its delivery (status.json,
// through the server's /status), asked for again every few seconds while the page is open.

import { messageOf } from './outcomes.js';

const REFRESH_MS = 5_000;

/**
 * After a sign-in or sign-out on this page, the running plugin follows within 5 s and writes its status
 * within a second more: the panel asks then, rather than up to REFRESH_MS after that.
 */
const FOLLOW_MS = 6_500;

const NOT_RUNNING = 'Homebridge is not running this plugin.';

/** Where the session stands, when that is why alerts cannot arrive. */
const SESSION_WORDS = {
  'signing-in': 'Connecting to the doorbell service…',
  'signed-out': 'Not signed in: sign in above to receive alerts.',
  expired: 'The session expired: sign in again above.',
  'token-refused': 'The doorbell service refused the doorbell access token in the settings: replace it, save, and restart Homebridge.',
};

/** Without a session the plugin closes the relay on purpose: what opens it again. */
const RELAY_WAITS_FOR = {
  'signed-out': 'The push relay connects once you sign in.',
  expired: 'The push relay connects once you sign in again.',
  'token-refused': 'The push relay connects once the doorbell service accepts the access token.',
};

/**
 * Shows the status now and every REFRESH_MS after each answer, until the page goes. Returns the
 * function to call when the account changed on this page: it asks at once, and again once the plugin
 * has had time to follow. One request at a time and one timer, however often it is called.
 */
export function startStatusPanel(panel) {
  let timer;
  let asking = false;
  /** The account changed while a request was under way, whose answer may be older than the change. */
  let changedMeanwhile = false;
  let stopped = false;
  const ask = async (nextMs) => {
    window.clearTimeout(timer);
    if (asking) {
      changedMeanwhile = true;
      return;
    }
    asking = true;
    try {
      showStatus(panel, await homebridge.request('/status'));
    } catch (error) {
      showLines(panel, [messageOf(error)], []);
    }
    asking = false;
    if (stopped) {
      return;
    }
    if (changedMeanwhile) {
      changedMeanwhile = false;
      void ask(FOLLOW_MS);
      return;
    }
    timer = window.setTimeout(() => void ask(REFRESH_MS), nextMs);
  };
  window.addEventListener('pagehide', () => {
    stopped = true;
    window.clearTimeout(timer);
  });
  void ask(REFRESH_MS);
  return () => void ask(FOLLOW_MS);
}

function showStatus(panel, status) {
  if (status.running !== true) {
    showLines(panel, [NOT_RUNNING, 'Alerts arrive while Homebridge runs it: start Homebridge, or restart it after saving the settings.'], []);
    return;
  }
  const lines = [describeDelivery(status), SESSION_WORDS[status.session], describeRegistration(status)].filter(Boolean);
  showLines(panel, lines, status.doorbells.map(describeDoorbell));
}

function describeDelivery({ pushMode, relay, receiver, session }) {
  if (pushMode === 'relay') {
    if (relay?.connected) {
      return `Receiving alerts through the relay since ${timeOf(relay.since)}.`;
    }
    return RELAY_WAITS_FOR[session] ?? 'The push relay is not connected: alerts cannot arrive until it is back.';
  }
  return receiver?.listening ? 'The push receiver is listening.' : 'The push receiver is not listening yet.';
}

function describeRegistration({ registeredAt, nextRefreshAt }) {
  const next = nextRefreshAt ? `next refresh ${timeOf(nextRefreshAt)}` : undefined;
  if (registeredAt) {
    return `Registered ${timeOf(registeredAt)}${next ? `, ${next}` : ''}.`;
  }
  return `Not registered for alerts yet${nextRefreshAt ? `; next try ${timeOf(nextRefreshAt)}` : ''}.`;
}

function describeDoorbell({ name, deviceId, fault, lastMotionAt, lastRingAt }) {
  const state = fault ?? 'subscribed';
  const motion = lastMotionAt ? `last motion ${timeOf(lastMotionAt)}` : 'no motion yet';
  const ring = lastRingAt ? `last ring ${timeOf(lastRingAt)}` : 'no ring yet';
  return { text: `${name} (${deviceId}): ${state}; ${motion}, ${ring}.`, ok: fault === null };
}

function showLines(panel, lines, doorbells) {
  panel.summary.replaceChildren(...lines.map((line) => paragraph(line)));
  panel.doorbells.replaceChildren(
    ...doorbells.map(({ text, ok }) => {
      const item = document.createElement('li');
      item.className = `list-group-item${ok ? '' : ' text-danger'}`;
      item.textContent = text;
      return item;
    }),
  );
  // An empty list would still draw its border.
  panel.doorbells.hidden = doorbells.length === 0;
}

function paragraph(text) {
  const line = document.createElement('p');
  line.className = 'mb-1';
  line.textContent = text;
  return line;
}

/** "10:02" today, "Nov 21, 10:02" before. */
function timeOf(iso) {
  const date = new Date(iso);
  const sameDay = date.toDateString() === new Date().toDateString();
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return sameDay ? time : `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`;
}

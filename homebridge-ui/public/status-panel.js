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

const CHECKING = 'Checking…';

/** How many of the outages status.json keeps (newest first) the panel shows. */
const RECENT_OUTAGES = 5;

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

/** A sign-in on this page that the running plugin has not taken up (the server's `pageSignIn`). */
const PAGE_SIGN_IN_WORDS = {
  waiting: 'Signed in above: waiting for the plugin in Homebridge to follow (a few seconds).',
  'not-followed': 'The plugin in Homebridge has not followed the sign-in above: restart Homebridge to use it (its log says why).',
};

/** A doorbell's fault meanwhile: its own would say it is not signed in, under the page's "Signed in as". */
const PAGE_SIGN_IN_FAULTS = {
  waiting: 'waiting for the plugin to follow the sign-in',
  'not-followed': 'the plugin has not followed the sign-in',
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
    const show = await homebridge.request('/status').then(
      (status) => () => showStatus(panel, status),
      (error) => () => showLines(panel, [messageOf(error)], [], []),
    );
    asking = false;
    if (stopped) {
      return;
    }
    if (changedMeanwhile) {
      // Asked before the change: the answer could contradict the account the page now shows.
      changedMeanwhile = false;
      void ask(FOLLOW_MS);
      return;
    }
    show();
    timer = window.setTimeout(() => void ask(REFRESH_MS), nextMs);
  };
  window.addEventListener('pagehide', () => {
    stopped = true;
    window.clearTimeout(timer);
  });
  void ask(REFRESH_MS);
  return () => {
    // What the panel shows was true of the account before the change: gone until the answer after it.
    showLines(panel, [CHECKING], [], []);
    void ask(FOLLOW_MS);
  };
}

function showStatus(panel, status) {
  if (status.running !== true) {
    showLines(panel, [NOT_RUNNING, 'Alerts arrive while Homebridge runs it: start Homebridge, or restart it after saving the settings.'], [], []);
    return;
  }
  if (Array.isArray(status.accounts)) {
    showAccountsStatus(panel, status);
    return;
  }
  const { session, pageSignIn } = status;
  // The plugin is signed out, but the page above is signed in: the plugin's words for that would contradict it.
  const behind = PAGE_SIGN_IN_WORDS[pageSignIn] !== undefined && RELAY_WAITS_FOR[session] !== undefined;
  const lines = behind
    ? [describeAlerts(status.alerts, { withReason: false }), PAGE_SIGN_IN_WORDS[pageSignIn]]
    : [describeAlerts(status.alerts, { withReason: true }), describeDelivery(status), PAGE_SIGN_IN_WORDS[pageSignIn] ?? SESSION_WORDS[session], describeRegistration(status)];
  const doorbells = status.doorbells.map((doorbell) =>
    behind && doorbell.fault !== null ? { ...describeDoorbell({ ...doorbell, fault: PAGE_SIGN_IN_FAULTS[pageSignIn] }), tone: 'muted' } : describeDoorbell(doorbell),
  );
  showLines(panel, lines.filter(Boolean), doorbells, describeOutages(status.outages));
}

/**
 * With several accounts: whether alerts flow and how they arrive, then each account under its label
 * (its session, its registration) with its doorbells.
 */
function showAccountsStatus(panel, status) {
  const accounts = status.accounts.filter((account) => typeof account?.label === 'string');
  // An account signed in above that the plugin has not taken up yet: its signed-out words would contradict the page.
  const isBehind = ({ session, pageSignIn }) => PAGE_SIGN_IN_WORDS[pageSignIn] !== undefined && RELAY_WAITS_FOR[session] !== undefined;
  // The plugin closes the relay on purpose when no account has a session: say why, as with one account.
  const waiting = accounts.length > 0 && accounts.every((account) => RELAY_WAITS_FOR[account.session] !== undefined && !isBehind(account)) ? accounts[0].session : undefined;
  const lines = [describeAlerts(status.alerts, { withReason: accounts.every((account) => !isBehind(account)) }), describeDelivery({ ...status, session: waiting })];
  const doorbells = status.doorbells ?? [];
  const items = accounts.flatMap((account) => {
    const behind = isBehind(account);
    const registration = account.session === 'signing-in' || SESSION_WORDS[account.session] === undefined ? describeRegistration(account) : undefined;
    const words = behind ? PAGE_SIGN_IN_WORDS[account.pageSignIn] : [SESSION_WORDS[account.session], registration].filter(Boolean).join(' ');
    const heading = { text: account.label, detail: words, heading: true };
    const own = doorbells.filter(({ label }) => label === account.label);
    return [
      heading,
      ...own.map((doorbell) =>
        behind && doorbell.fault !== null ? { ...describeDoorbell({ ...doorbell, fault: PAGE_SIGN_IN_FAULTS[account.pageSignIn] }), tone: 'muted' } : describeDoorbell(doorbell),
      ),
    ];
  });
  const others = doorbells.filter(({ label }) => !accounts.some((account) => account.label === label)).map(describeDoorbell);
  showLines(panel, lines.filter(Boolean), [...items, ...others], describeOutages(status.outages));
}

/**
 * The first line: whether alerts flow, as the plugin's Doorbell Alerts sensor shows it. Left out for a
 * status without it (written by an older plugin). `withReason: false` leaves out a reason the page
 * has made old, such as "signed out" just after a sign-in above.
 */
function describeAlerts(alerts, { withReason }) {
  if (typeof alerts?.flowing !== 'boolean') {
    return undefined;
  }
  if (alerts.flowing) {
    return { text: 'Alerts are flowing.', tone: 'success' };
  }
  const at = isTime(alerts.since) ? ` at ${timeOf(alerts.since)}` : '';
  const reason = withReason && typeof alerts.reason === 'string' && alerts.reason !== '' ? `: ${alerts.reason}` : '';
  return { text: `Alerts stopped${at}${reason}.`, tone: 'danger' };
}

/** What an outage holds of its own when nothing else had stopped alerts: its late count says it. */
const CAME_TOO_LATE = 'alerts came too late to show';

/**
 * The newest outages, as "10:02–10:16 (14 min): <reason>", and how many alerts came too late to show
 * after it ("…; 2 alerts came too late to show"); one still going has no end.
 */
function describeOutages(outages) {
  if (!Array.isArray(outages)) {
    return [];
  }
  return outages
    .filter((outage) => isTime(outage?.from))
    .slice(0, RECENT_OUTAGES)
    .map(({ from, to, reason, late }) => {
      const ended = isTime(to);
      const length = durationOf(Date.parse(ended ? to : new Date().toISOString()) - Date.parse(from));
      // The end's date only when it differs from the start's.
      const end = ended && new Date(to).toDateString() === new Date(from).toDateString() ? clockOf(to) : ended ? timeOf(to) : '';
      const span = ended ? `${timeOf(from)}–${end} (${length})` : `${timeOf(from)}– (${length} so far)`;
      const lateWords = Number.isInteger(late) && late > 0 ? `${late} ${late === 1 ? 'alert' : 'alerts'} came too late to show` : undefined;
      const words = [typeof reason === 'string' && reason !== '' && !(reason === CAME_TOO_LATE && lateWords) ? reason : undefined, lateWords].filter(Boolean).join('; ');
      return words === '' ? span : `${span}: ${words}`;
    });
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

/** Nothing while the first registration with a new session is under way: the session's line says it is connecting. */
function describeRegistration({ registeredAt, nextRefreshAt, session }) {
  const next = nextRefreshAt ? `next refresh ${timeOf(nextRefreshAt)}` : undefined;
  if (registeredAt) {
    return `Registered ${timeOf(registeredAt)}${next ? `, ${next}` : ''}.`;
  }
  if (session === 'signing-in' && !nextRefreshAt) {
    return undefined;
  }
  return `Not registered for alerts yet${nextRefreshAt ? `; next try ${timeOf(nextRefreshAt)}` : ''}.`;
}

/** A switch off for a while, by its field in status.json, in the words of a doorbell's line. */
const OFF_FOR_A_WHILE = { motionAlertsOffUntil: 'motion alerts', chimeOffUntil: 'chime' };

function describeDoorbell(doorbell) {
  const { name, deviceId, fault, lastMotionAt, lastRingAt } = doorbell;
  const state = fault ?? 'subscribed';
  const motion = lastMotionAt ? `last motion ${timeOf(lastMotionAt)}` : 'no motion yet';
  const ring = lastRingAt ? `last ring ${timeOf(lastRingAt)}` : 'no ring yet';
  const silenced = Object.entries(OFF_FOR_A_WHILE)
    .filter(([field]) => isTime(doorbell[field]))
    .map(([field, what]) => `; ${what} off until ${timeOf(doorbell[field])}`)
    .join('');
  return { text: `${name} (${deviceId}): ${state}; ${motion}, ${ring}${silenced}${describeHealth(doorbell)}.`, tone: fault === null ? undefined : 'danger' };
}

/** A battery doorbell at 20 % or less reads low, as the Home app shows it. */
const LOW_BATTERY_PERCENT = 20;

/** What the doorbell service says of the doorbell: `; battery 15 % (low); offline since 10:02`, or nothing. Absent from an older plugin's status. */
function describeHealth({ battery, online, offlineSince }) {
  const parts = [];
  if (typeof battery === 'number') {
    parts.push(`battery ${battery} %${battery <= LOW_BATTERY_PERCENT ? ' (low)' : ''}`);
  }
  if (online === false) {
    parts.push(offlineSince ? `offline since ${timeOf(offlineSince)}` : 'offline');
  }
  return parts.map((part) => `; ${part}`).join('');
}

/** `lines`: texts, or `{ text, tone }` for a line in a Bootstrap text colour. */
function showLines(panel, lines, doorbells, outages) {
  panel.summary.replaceChildren(...lines.map((line) => (typeof line === 'string' ? paragraph(line) : paragraph(line.text, line.tone))));
  panel.doorbells.replaceChildren(
    ...doorbells.map(({ text, tone, heading, detail }) => {
      const item = document.createElement('li');
      if (heading) {
        // An account's label, with its session and registration beside it, above its doorbells.
        item.className = 'list-group-item list-group-item-light';
        const label = document.createElement('span');
        label.className = 'fw-semibold';
        label.textContent = text;
        item.append(label, detail ? `: ${detail}` : '');
        return item;
      }
      item.className = `list-group-item${tone === undefined ? '' : ` text-${tone}`}`;
      item.textContent = text;
      return item;
    }),
  );
  // An empty list would still draw its border.
  panel.doorbells.hidden = doorbells.length === 0;
  panel.outageList.replaceChildren(
    ...outages.map((text) => {
      const item = document.createElement('li');
      item.textContent = text;
      return item;
    }),
  );
  panel.outages.hidden = outages.length === 0;
}

function paragraph(text, tone) {
  const line = document.createElement('p');
  line.className = tone === undefined ? 'mb-1' : `mb-1 fw-semibold text-${tone}`;
  line.textContent = text;
  return line;
}

/** "10:02" today, "Nov 21, 10:02" before. */
function timeOf(iso) {
  const date = new Date(iso);
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? clockOf(iso) : `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${clockOf(iso)}`;
}

/** "10:02", whatever the day. */
function clockOf(iso) {
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

function isTime(value) {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

/** "14 min", "2 h 5 min", "3 d 4 h": an outage lasts a minute at least. */
function durationOf(ms) {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) {
    return `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  }
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

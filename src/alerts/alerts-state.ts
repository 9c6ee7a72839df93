/**
 * Whether alerts reach this Homebridge, as the Doorbell Alerts sensor shows it, and the times they
 * stopped: what status.json keeps of it, so that the settings page can show it and a restart carries
 * it over. Times are ISO strings; the words never hold a secret.
 */

/** One time alerts stopped. */
export interface Outage {
  /** When the down period that opened the sensor began (at least a minute before it opened). */
  from: string;
  /** When the sensor closed again; null while the outage lasts. */
  to: string | null;
  /** Why, in the words of the warning that said so. */
  reason: string;
  /**
   * Rings and motions that arrived too late to show (dropped as stale after the relay came back);
   * absent from an outage an earlier version wrote.
   */
  late?: number;
}

export interface AlertsHealth {
  /** The sensor is closed: alerts flow. */
  flowing: boolean;
  /** Since when: the start of the outage while it lasts, its end (or the first start) once they flow. */
  since: string;
  /** Why they stopped, while they do not flow. */
  reason: string | null;
}

export interface AlertsRecord {
  alerts: AlertsHealth;
  /** Newest first, at most MAX_OUTAGES. */
  outages: Outage[];
}

/** A night's outages, and more, but never a file that grows without end. */
export const MAX_OUTAGES = 20;

/**
 * The last run's outages, copied, newest first, and the one under way at its shutdown, if any: an
 * outage is made for it when the record lost it.
 */
export function lastRun(previous: Partial<AlertsRecord> | undefined): { outages: Outage[]; open: Outage | undefined } {
  const outages = (previous?.outages ?? []).slice(0, MAX_OUTAGES).map((outage) => ({ ...outage }));
  const alerts = previous?.alerts;
  if (alerts?.flowing !== false) {
    return { outages, open: undefined };
  }
  if (outages[0]?.to === null) {
    return { outages, open: outages[0] };
  }
  const open = { from: alerts.since, to: null, reason: alerts.reason ?? 'unknown', late: 0 };
  return { outages: [open, ...outages].slice(0, MAX_OUTAGES), open };
}

/** Why an outage holds alerts that came too late, when nothing else had stopped them. */
export const CAME_TOO_LATE = 'alerts came too late to show';

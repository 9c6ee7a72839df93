/** The soak's printed summary: the plan's events as they happened, the outages, the figures, and what broke. */
import type { SoakResults } from './results.js';
import type { WeekReport } from './week.js';
import type { WeekPlan } from './week-plan.js';

const duration = (ms: number): string => (ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

export function summary(plan: WeekPlan, report: WeekReport, results: SoakResults, broken: readonly string[]): string {
  const { timeline } = report;
  const { accounts, alerts, outages, resources } = results;
  const lines = [
    `Soak: ${plan.days} simulated days, seed ${plan.seed} (npm run soak -- --seed ${plan.seed}${plan.days < 7 ? ' --quick' : ''} replays the plan)`,
    '',
    'What happened:',
    ...timeline.entries().map(({ atMs, label }) => `  ${timeline.when(atMs)}  ${label}`),
    '',
    'Outages of a minute or more, as the plugin saw them (a doorbell\'s StatusFault):',
    ...report.outages.map(({ period, opening }) => {
      const end = period.toMs === undefined ? 'still down' : `${duration(period.toMs - period.fromMs)}`;
      const sensor =
        opening === undefined
          ? 'the sensor did not open'
          : `opened ${duration(opening.fromMs - period.fromMs)} in, closed ${opening.toMs === undefined || period.toMs === undefined ? 'never' : `${((opening.toMs - period.toMs) / 1000).toFixed(1)} s after the end`}`;
      return `  ${timeline.when(period.fromMs)}  ${end}; ${sensor}`;
    }),
    '',
    `Refreshes: ${results.refreshes} over ${results.simulatedDays} days`,
    `Rings: ${alerts.sent} sent, ${alerts.delivered} delivered (${alerts.caughtUp} of them caught up after a reconnect), ` +
      `${alerts.stale} dropped as stale (${alerts.late} counted late in status.json), ${alerts.afterExpiry} not sent while the session had expired, ${alerts.lost} lost`,
    `Homebridge restarts: ${results.homebridgeRestarts}; rings published while it was down: ${results.ringsDuringRestart}, ` +
      `${results.ringsDuringRestartDelivered} of them delivered once it was back`,
    `The session expired: the sensor opened ${results.expiryToSensorMaxMinutes === null ? 'never' : `${results.expiryToSensorMaxMinutes} minutes`} after`,
    `The other account meanwhile: ${accounts.otherRingsDuringExpiry} rings, ${accounts.otherRingsDuringExpiryDelivered} delivered, ` +
      `its doorbells put in fault ${accounts.otherFaultsDuringExpiry} times; ${accounts.expiryWarnings} warnings that alerts stopped, ${accounts.expiryWarningsNamingAccount} naming the expired account`,
    `Outages: ${outages.seen} seen, ${outages.opened} opened the sensor, ${outages.falseOpens} false openings; ` +
      `opened at most ${outages.maxOpenDelayS} s and closed at most ${outages.maxCloseDelayS} s after the plugin knew; ` +
      `${outages.warnings} warnings, ${outages.recoveries} recovery lines`,
    `Held: ${resources.handlesAfterLaunch} timers, sockets and servers after the launch, ${resources.handlesAfterWeek} after the week; ` +
      `heap ${resources.heapDeltaMiB >= 0 ? '+' : ''}${resources.heapDeltaMiB} MiB`,
    `Wall time: ${results.wallSeconds} s (target: under 240 s)`,
    ...report.notes.map((note) => `  ${note}`),
    '',
    "The plugin's warnings and errors (digits as N):",
    ...[...report.problems].map(([gist, count]) => `  ${String(count).padStart(4)} × ${gist}`),
    '',
    broken.length === 0 ? 'Every check holds.' : `FAILED:\n${broken.map((rule) => `  - ${rule}`).join('\n')}`,
  ];
  return lines.join('\n');
}

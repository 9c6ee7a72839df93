/**
 * The platform's log over a simulated week: every line is handed to the soak's observers as it is
 * written, with the true time it was written at, and only the latest lines are kept (to show when
 * something went wrong), so a week of logging takes no more memory at its end than at its start.
 * Warnings and errors are tallied by what they say, numbers left out, for the summary.
 */
import type { Logging, LogLevel } from 'homebridge';
import type { Logger } from '../../src/log.js';
import { loggingTo } from '../lib/homebridge-api.js';

export interface LogLine {
  level: `${LogLevel}`;
  message: string;
  /** True time, ms since the epoch. */
  atMs: number;
}

type Listener = (line: LogLine) => void;

/** How many of the latest lines are kept. */
const KEPT_LINES = 50;

export type SoakLogger = Logging & Logger;

export class PluginLog {
  readonly logger: SoakLogger;
  /** Warnings and errors by their text with digits replaced, and how often each came. */
  readonly problems = new Map<string, number>();
  private readonly latest: LogLine[] = [];
  private readonly listeners: Listener[] = [];

  constructor(private readonly now: () => number) {
    this.logger = loggingTo('DoorbellMotion', (level, message) => this.write(level, message));
  }

  /**
   * A logger for one run of the platform: its lines are this log's while `alive()` holds, and
   * nothing after (a killed process writes no more lines).
   */
  loggerWhile(alive: () => boolean): SoakLogger {
    return loggingTo('DoorbellMotion', (level, message) => alive() && this.write(level, message));
  }

  /** Told of every line from now on. */
  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** The latest lines, oldest first. */
  tail(): readonly LogLine[] {
    return this.latest;
  }

  private write(level: `${LogLevel}`, message: string): void {
    const line = { level, message, atMs: this.now() };
    this.latest.push(line);
    if (this.latest.length > KEPT_LINES) {
      this.latest.shift();
    }
    if (level === 'warn' || level === 'error') {
      const gist = `${level}: ${message.replace(/\d+/g, 'N')}`;
      this.problems.set(gist, (this.problems.get(gist) ?? 0) + 1);
    }
    this.listeners.forEach((listener) => listener(line));
  }
}

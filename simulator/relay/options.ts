import type { RelayOptions } from './types.js';

export interface RelaySettings {
  host: string;
  port: number;
  tokens: readonly string[];
  keepaliveMs: number;
  cacheMs: number;
  subscriberRateLimiting: boolean;
  now: () => number;
}

/** ntfy's defaults: keepalive-interval 45 s, cache-duration 12 h. */
const DEFAULTS = { host: '127.0.0.1', port: 0, keepaliveMs: 45_000, cacheMs: 12 * 60 * 60 * 1000 };

/** setInterval's longest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Refuses options that could not do what their author meant, so a test cannot pass by accident. */
export function relaySettings(options: RelayOptions): RelaySettings {
  const settings: RelaySettings = {
    host: options.host ?? DEFAULTS.host,
    port: options.port ?? DEFAULTS.port,
    tokens: options.tokens ?? [],
    keepaliveMs: options.keepaliveMs ?? DEFAULTS.keepaliveMs,
    cacheMs: options.cacheMs ?? DEFAULTS.cacheMs,
    subscriberRateLimiting: options.subscriberRateLimiting ?? true,
    now: options.now ?? Date.now,
  };
  const rules: Array<[boolean, string]> = [
    [!(Number.isInteger(settings.port) && settings.port >= 0 && settings.port <= 65535), 'port must be an integer 0-65535'],
    [settings.tokens.some((token) => !/^\S+$/.test(token)), 'tokens must be non-empty and without white space'],
    [!(settings.keepaliveMs >= 1 && settings.keepaliveMs <= MAX_TIMER_MS), `keepaliveMs must be 1-${MAX_TIMER_MS}`],
    [!(Number.isFinite(settings.cacheMs) && settings.cacheMs >= 0), 'cacheMs must be a number >= 0'],
  ];
  const broken = rules.filter(([isBroken]) => isBroken).map(([, message]) => message);
  if (broken.length > 0) {
    throw new TypeError(`relay options: ${broken.join('; ')}`);
  }
  return settings;
}

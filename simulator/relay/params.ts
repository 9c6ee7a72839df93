import type { IncomingHttpHeaders } from 'node:http';

/**
 * A request's parameters as ntfy reads them: each has several names (`X-Since`, `since`, `si`), and
 * every name is tried as a header before any is tried as a lower-case query parameter. Values are
 * trimmed; an empty one counts as absent.
 */
export class RequestParams {
  private readonly query: URLSearchParams;

  constructor(
    private readonly headers: IncomingHttpHeaders,
    rawQuery: string,
  ) {
    this.query = new URLSearchParams(rawQuery);
  }

  read(names: readonly string[]): string {
    for (const name of names) {
      const value = this.headers[name.toLowerCase()];
      const text = (Array.isArray(value) ? value[0] : value)?.trim();
      if (text) {
        return text;
      }
    }
    for (const name of names) {
      const text = this.query.get(name.toLowerCase())?.trim();
      if (text) {
        return text;
      }
    }
    return '';
  }

  /** `1`, `yes` and `true` (any case) are true, any other value false, absence `fallback`. */
  readBool(names: readonly string[], fallback = false): boolean {
    const value = this.read(names).toLowerCase();
    return value === '' ? fallback : ['1', 'yes', 'true'].includes(value);
  }
}

export const SINCE_PARAM = ['x-since', 'since', 'si'] as const;
export const POLL_PARAM = ['x-poll', 'poll', 'po'] as const;
export const UNIFIED_PUSH_PARAM = ['x-unifiedpush', 'unifiedpush', 'up'] as const;

import type { IncomingHttpHeaders } from 'node:http';

/** `unknown`: credentials were offered and none is known (401); `anonymous`: none were offered (403). */
export type Access = 'granted' | 'anonymous' | 'unknown';

type Offer = { kind: 'none' } | { kind: 'token'; token: string } | { kind: 'password' };

/**
 * Access control with tokens and nothing else: every known token may read and write every topic.
 * ntfy takes a token as `Authorization: Bearer <token>`, or as the password of Basic with an empty
 * user name; any other scheme counts as no Authorization (https://docs.ntfy.sh/publish/#authentication).
 * Without tokens, the relay is an ntfy without an auth file and ignores Authorization altogether.
 */
export class AccessControl {
  private readonly tokens: ReadonlySet<string>;

  constructor(tokens: readonly string[] = []) {
    this.tokens = new Set(tokens);
  }

  check(headers: IncomingHttpHeaders): Access {
    if (this.tokens.size === 0) {
      return 'granted';
    }
    const offer = offered(headers.authorization ?? '');
    if (offer.kind === 'none') {
      return 'anonymous';
    }
    // This relay has no users, so a user name and password are always wrong.
    return offer.kind === 'token' && this.tokens.has(offer.token) ? 'granted' : 'unknown';
  }
}

function offered(authorization: string): Offer {
  const [scheme = '', value = ''] = authorization.trim().split(/\s+/, 2);
  switch (scheme.toLowerCase()) {
    case 'bearer':
      return { kind: 'token', token: value };
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      return decoded.startsWith(':') ? { kind: 'token', token: decoded.slice(1) } : { kind: 'password' };
    }
    default:
      return { kind: 'none' };
  }
}

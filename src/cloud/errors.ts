import { isRetryable } from './retry-policy.js';

export type CloudErrorKind = 'network' | 'timeout' | 'http' | 'service' | 'malformed' | 'too-large' | 'unauthorized' | 'insecure' | 'aborted';

export interface CloudErrorOptions {
  kind: CloudErrorKind;
  method: string;
  /** The request path only: the query holds the e-mail address, which is personal data. */
  path: string;
  status?: number;
  serviceCode?: number;
  serviceMsg?: string;
  retryAfterMs?: number;
  /** What went wrong, in words that hold no secret (a field name, an error code). */
  detail?: string;
  cause?: Error;
}

/** The account service's code for a session it no longer accepts. */
const SESSION_INVALID_CODE = 2010;

const NO_SUCH_ACCOUNT = 'there is no such account at this server';

/**
 * What each code the account service is known to answer means. What the user should do about it
 * depends on where they sign in, so that advice is the session layer's.
 */
const SERVICE_CODE_MEANING: Readonly<Record<number, string>> = {
  1002: 'the service rejected a parameter',
  2008: NO_SUCH_ACCOUNT,
  [SESSION_INVALID_CODE]: 'the session is no longer valid',
  2018: 'the verification code is wrong or expired',
  3006: 'the agreement version is out of date',
  3039: NO_SUCH_ACCOUNT,
  9002: 'too many attempts',
};

/** A server's msg is shown to the user, but never at any length. */
const MAX_SERVICE_MSG_LENGTH = 200;

/** Any failure of a call to the account or doorbell service. */
export class CloudError extends Error {
  override readonly name = 'CloudError';
  readonly kind: CloudErrorKind;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly serviceCode: number | undefined;
  readonly serviceMsg: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** The one place that decides whether asking again can help. */
  readonly retryable: boolean;

  constructor(options: CloudErrorOptions) {
    super(describeFailure(options), options.cause === undefined ? undefined : { cause: sanitizeCause(options.cause) });
    this.kind = options.kind;
    this.method = options.method;
    this.path = options.path;
    this.status = options.status;
    this.serviceCode = options.serviceCode;
    this.serviceMsg = options.serviceMsg;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = retryableFailure(options.kind, options.status);
  }

  /**
   * The service received the request and decided on it: a service code in its envelope, or 401 (it
   * refuses the session). A one-time code sent with it is spent. A request that got no answer, a busy
   * server's answer or one that is not what the service sends (a proxy's or firewall's 403 page, say)
   * did not reach a decision, and may be sent again.
   */
  get serviceAnswered(): boolean {
    return !this.retryable && (this.serviceCode !== undefined || this.kind === 'unauthorized');
  }

  /** What the service code means, for the codes the account service is known to answer. */
  get serviceCodeMeaning(): string | undefined {
    return this.serviceCode === undefined ? undefined : SERVICE_CODE_MEANING[this.serviceCode];
  }

  /** The session token is no longer accepted: signing in again is the only way on. */
  get sessionInvalid(): boolean {
    return this.status === 401 || this.serviceCode === SESSION_INVALID_CODE;
  }
}

function retryableFailure(kind: CloudErrorKind, status: number | undefined): boolean {
  return kind === 'http' && status !== undefined ? isRetryable(status) : isRetryable(kind);
}

function describeFailure(options: CloudErrorOptions): string {
  const parts = [describeKind(options)];
  if (options.serviceCode !== undefined) {
    parts.push(describeServiceCode(options.serviceCode, options.serviceMsg));
  }
  if (options.retryAfterMs !== undefined) {
    parts.push(`the server asks to wait ${Math.ceil(options.retryAfterMs / 1000)} s before trying again`);
  }
  return `${options.method} ${options.path} failed: ${parts.join('; ')}`;
}

function describeKind({ kind, status, detail }: CloudErrorOptions): string {
  const withDetail = (text: string): string => (detail === undefined ? text : `${text} (${detail})`);
  switch (kind) {
    case 'network':
      return withDetail('network error; check the address and the network connection');
    case 'timeout':
      return withDetail('no answer in time');
    case 'http':
      return withDetail(`HTTP ${status}`);
    case 'service':
      return 'the service refused the request';
    case 'malformed':
      return withDetail(`HTTP ${status} with a response that is not what the service sends`);
    case 'too-large':
      return `an answer larger than ${detail ?? 'the limit'}, far more than the service sends; it was not read`;
    case 'unauthorized':
      return `HTTP ${status}: the access token is not accepted`;
    case 'insecure':
      return withDetail('refused to send credentials over an insecure connection');
    case 'aborted':
      return 'aborted';
  }
}

function describeServiceCode(code: number, msg: string | undefined): string {
  const said = msg === undefined || msg === '' ? '' : ` ${JSON.stringify(msg.slice(0, MAX_SERVICE_MSG_LENGTH))}`;
  const meaning = SERVICE_CODE_MEANING[code];
  return `service code ${code}${said}${meaning === undefined ? '' : `: ${meaning}`}`;
}

/**
 * Keeps only the name, code and message of the underlying error. An HTTP client's error holds the
 * request configuration, headers (Authorization) and body (the code) included, which `util.inspect`
 * would print with the cause.
 */
function sanitizeCause(cause: Error): Error {
  const code = (cause as { code?: unknown }).code;
  const sanitized = new Error(cause.message);
  sanitized.name = cause.name;
  return typeof code === 'string' ? Object.assign(sanitized, { code }) : sanitized;
}

/**
 * The logger every part of the plugin writes through. The platform wraps Homebridge's logger once in
 * a SecretMaskingLogger, so a secret learned anywhere (token, code, receiver secret, rriot values) is
 * masked in every line at every level, whichever component wrote it.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const MASK = '***';

/** An error's message for a log line; anything else thrown, as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The system's code for what failed (ENOSPC, ECONNREFUSED); undefined for an error without one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** How much of a text a sender chose one log line quotes. */
const MAX_QUOTED_LENGTH = 64;

/**
 * Characters JSON leaves as they are that a terminal or log viewer may act on: DEL and the C1
 * controls (some terminals take U+009B for the start of an escape sequence), the line and paragraph
 * separators, and the marks that reorder the text around them.
 */
const UNSAFE_AFTER_JSON = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A text a sender chose (a notification's kind, a request's path), fit for one log line: cut at 64
 * characters with an ellipsis, then quoted and escaped as a JSON string. No newline, control character
 * or terminal escape of it reaches the log, so a stranger can neither forge a line nor flood the log.
 */
export function quoteForLog(text: string): string {
  const cut = text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text;
  return JSON.stringify(cut).replace(UNSAFE_AFTER_JSON, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Every string inside a value, nested ones included: how a credentials object becomes secrets. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') {
    return [value];
  }
  return value !== null && typeof value === 'object' ? Object.values(value).flatMap(stringsIn) : [];
}

/**
 * Shorter values would mask ordinary words; no real secret of ours is this short, and the config
 * refuses shorter tokens (config.schema.json) so that every configured one is masked.
 */
const MIN_SECRET_LENGTH = 4;

export class SecretMaskingLogger implements Logger {
  constructor(
    private readonly target: Logger,
    /** Shared with the loggers `labelled` makes: a secret one of them learns is masked in all. */
    private readonly secrets = new Set<string>(),
    /** `[Cabin] `: what every line starts with, so a line about one of several accounts says which. */
    private readonly prefix = '',
  ) {}

  /**
   * The same logger, each line starting with `[label] `, the secrets shared both ways; this very
   * logger without a label (the one account of a config without `accounts`, whose lines stay as they were).
   */
  labelled(label: string | undefined): SecretMaskingLogger {
    return label === undefined ? this : new SecretMaskingLogger(this.target, this.secrets, `${this.prefix}[${label}] `);
  }

  /** Registers values that must never appear in a log line. */
  addSecrets(...values: Array<string | undefined>): void {
    for (const value of values) {
      if (value !== undefined && value.length >= MIN_SECRET_LENGTH) {
        this.secrets.add(value);
      }
    }
  }

  mask(message: string): string {
    let masked = message;
    // Longest first, so a secret containing another is masked whole.
    for (const secret of [...this.secrets].sort((a, b) => b.length - a.length)) {
      masked = masked.split(secret).join(MASK);
    }
    return masked;
  }

  debug(message: string): void {
    this.target.debug(this.mask(this.prefix + message));
  }

  info(message: string): void {
    this.target.info(this.mask(this.prefix + message));
  }

  warn(message: string): void {
    this.target.warn(this.mask(this.prefix + message));
  }

  error(message: string): void {
    this.target.error(this.mask(this.prefix + message));
  }
}

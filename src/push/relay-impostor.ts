import type { Logger } from '../log.js';

/** Why a connection to an address that is not an ntfy relay ended, for the debug log and the outage warning. */
export const NOT_A_RELAY = 'answered, but not as an ntfy relay';

/**
 * A server that answers the relay's address with `200` but is no ntfy relay: a captive portal, a
 * proxy's error page, a web site at a mistyped `push.relayUrl`. Counting its bytes as a live stream
 * would show the relay connected and register an address where every alert is lost in silence, so
 * only a well-formed ntfy event proves a stream, and such an answer is said once in the log, in words
 * that name the setting to check. Shared by the subscriptions of one run: said again only after a real
 * relay answered in between, not at each reconnect, nor after a sign-out and a sign-in.
 */
export class ImpostorWarning {
  private warned = false;

  constructor(
    /** Named in the warning; not a secret. */
    private readonly relayUrl: string,
    private readonly log: Logger,
  ) {}

  /** The address answered something that is not an ntfy stream. */
  notARelay(): void {
    if (!this.warned) {
      this.warned = true;
      this.log.warn(
        `push.relayUrl ${this.relayUrl} ${NOT_A_RELAY} (a web page, a captive portal or a proxy's error page?): ` +
          'motion alerts cannot arrive through it. Check push.relayUrl; still trying.',
      );
    }
  }

  /** A real relay answered: the next impostor is news again. */
  relayAnswered(): void {
    this.warned = false;
  }
}

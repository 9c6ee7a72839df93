/**
 * When the plugin's relay stream was down, as the soak knows from its side of the wire: from the
 * moment the stream went down (the relay stopped or a web page took its place: that moment; the
 * home cut off: the last bytes the relay got through to it, since a stream cut that way goes silent
 * without closing) to the plugin's next `push relay connected` line, or its next launch (from a
 * launch, the doorbells are down until confirmed, which is no relay outage).
 */
import type { Span } from './alerts-sensor.js';

export class RelayDowns {
  private readonly spans: Span[] = [];

  /** The stream went down at `atMs`; a later break before it is back changes nothing. */
  down(atMs: number): void {
    const last = this.spans.at(-1);
    if (last === undefined || last.toMs !== undefined) {
      this.spans.push({ fromMs: atMs, toMs: undefined });
    }
  }

  /** The stream opened, or the platform launched. */
  up(atMs: number): void {
    const last = this.spans.at(-1);
    if (last !== undefined && last.toMs === undefined) {
      last.toMs = atMs;
    }
  }

  record(): Span[] {
    return this.spans.map((span) => ({ ...span }));
  }
}

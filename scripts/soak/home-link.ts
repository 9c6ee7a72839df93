/**
 * The home's connection to the relay: a TCP proxy on loopback that the plugin's relayUrl points at,
 * so that the home can be cut off while the relay itself goes on accepting and caching what the
 * doorbell service publishes (which reaches the relay directly, not through here). A cut is a
 * network that drops everything: open connections go silent both ways, new ones are accepted and
 * never answered, as behind a router whose uplink is down. When it ends, what was held is reset.
 * It knows when the relay last reached the home: the last sign of life a stream cut this way gave.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

interface Link {
  home: Socket;
  relay: Socket | undefined;
}

/** A keepalive line of the relay's stream, as it comes through. */
const KEEPALIVE = /"event":"keepalive"/;

export class HomeLink {
  private readonly links = new Set<Link>();
  private cut = false;
  /** When bytes from the relay last reached the home. */
  private lastFromRelayAt: number | undefined;
  /** Armed by cutAfterKeepalive: the cut to make right after the next keepalive has passed. */
  private cutAfter: ((keepaliveAt: number) => void) | undefined;

  private constructor(
    private readonly server: Server,
    private readonly relayPort: number,
    private readonly now: () => number,
  ) {
    server.on('connection', (home) => this.accept(home));
  }

  /** Listens on an ephemeral loopback port, in front of the relay at `relayUrl`; `now` is true time. */
  static async open(relayUrl: string, now: () => number): Promise<HomeLink> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new HomeLink(server, Number(new URL(relayUrl).port), now);
  }

  /** The relay's address as the home reaches it. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Nothing passes any more, either way. Returns when the relay last reached the home (now when it
   * never did): a stream open now has been silent since then.
   */
  cutOff(): number {
    this.cut = true;
    this.cutAfter = undefined;
    for (const { home, relay } of this.links) {
      home.unpipe();
      relay?.unpipe();
      home.pause();
      relay?.pause();
    }
    return this.lastFromRelayAt ?? this.now();
  }

  /**
   * Cuts the home off right after the next keepalive reaches it, so that the stream's last sign of
   * life is that keepalive; `then` is told its time.
   */
  cutAfterKeepalive(then: (keepaliveAt: number) => void): void {
    this.cutAfter = then;
  }

  /** Traffic flows again; the connections the cut held are reset, as their peers would find them. */
  restore(): void {
    this.cut = false;
    for (const link of [...this.links]) {
      this.drop(link);
    }
  }

  async close(): Promise<void> {
    [...this.links].forEach((link) => this.drop(link));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(home: Socket): void {
    const link: Link = { home, relay: undefined };
    this.links.add(link);
    home.on('error', () => this.drop(link));
    home.on('close', () => this.drop(link));
    if (this.cut) {
      home.pause();
      return;
    }
    const relay = connect(this.relayPort, '127.0.0.1');
    link.relay = relay;
    relay.on('error', () => this.drop(link));
    relay.on('close', () => this.drop(link));
    home.pipe(relay);
    relay.pipe(home);
    // After the pipe's own listener: the chunk is on its way to the home before a cut it triggers.
    relay.on('data', (chunk: Buffer) => this.fromRelay(chunk));
  }

  private fromRelay(chunk: Buffer): void {
    if (this.cut) {
      return;
    }
    this.lastFromRelayAt = this.now();
    const then = this.cutAfter;
    if (then !== undefined && KEEPALIVE.test(chunk.toString('utf8'))) {
      const keepaliveAt = this.cutOff();
      then(keepaliveAt);
    }
  }

  private drop(link: Link): void {
    if (this.links.delete(link)) {
      link.home.destroy();
      link.relay?.destroy();
    }
  }
}

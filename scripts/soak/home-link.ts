/**
 * The home's connection to the relay: a TCP proxy on loopback that the plugin's relayUrl points at,
 * so that the home can be cut off while the relay itself goes on accepting and caching what the
 * doorbell service publishes (which reaches the relay directly, not through here). A cut is a
 * network that drops everything: open connections go silent both ways, new ones are accepted and
 * never answered, as behind a router whose uplink is down. When it ends, what was held is reset.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

interface Link {
  home: Socket;
  relay: Socket | undefined;
}

export class HomeLink {
  private readonly links = new Set<Link>();
  private cut = false;

  private constructor(
    private readonly server: Server,
    private readonly relayPort: number,
  ) {
    server.on('connection', (home) => this.accept(home));
  }

  /** Listens on an ephemeral loopback port, in front of the relay at `relayUrl`. */
  static async open(relayUrl: string): Promise<HomeLink> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new HomeLink(server, Number(new URL(relayUrl).port));
  }

  /** The relay's address as the home reaches it. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Nothing passes any more, either way. */
  cutOff(): void {
    this.cut = true;
    for (const { home, relay } of this.links) {
      home.unpipe();
      relay?.unpipe();
      home.pause();
      relay?.pause();
    }
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
  }

  private drop(link: Link): void {
    if (this.links.delete(link)) {
      link.home.destroy();
      link.relay?.destroy();
    }
  }
}

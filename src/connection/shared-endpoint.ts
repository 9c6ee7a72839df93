import type { PushEndpoint } from './connection.js';

/**
 * One push endpoint (the relay stream, or the receiver) for every account: each account's connection
 * registers the same push token with its own session. An account holds the endpoint from the moment
 * its connection opens it until it loses its session; the endpoint is suspended only once no account
 * holds it, so one account signed out never closes the stream the others' alerts arrive on.
 */
export class SharedEndpoint {
  private readonly holders = new Set<symbol>();

  constructor(private readonly endpoint: PushEndpoint) {}

  /** One account's way to the endpoint, as its connection uses it. */
  share(): PushEndpoint {
    const holder = Symbol('account');
    const { endpoint, holders } = this;
    return {
      open: () => {
        holders.add(holder);
        return endpoint.open();
      },
      suspend: () => {
        holders.delete(holder);
        return holders.size === 0 ? endpoint.suspend() : Promise.resolve();
      },
      get description() {
        return endpoint.description;
      },
    };
  }
}

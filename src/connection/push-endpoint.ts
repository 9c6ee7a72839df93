import { errorMessage } from '../log.js';

/** Where notifications arrive; opened before the push registration names it. */
export interface PushEndpoint {
  /** Starts receiving, once; resolves with the push token to register, a secret. */
  open(): Promise<string>;
  /** The session is gone: stops holding anything for it until the next open(). Never rejects. */
  suspend(): Promise<void>;
  /** Where notifications arrive, for the log: never the secret part. */
  readonly description: string;
}

/** The push endpoint did not open: the attempt to connect may be made again as soon as it does. */
export class EndpointNotOpen extends Error {
  constructor(cause: unknown) {
    super(errorMessage(cause), { cause });
    this.name = 'EndpointNotOpen';
  }
}

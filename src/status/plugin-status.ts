import type { ConnectionListener } from '../connection/connection.js';
import type { Logger } from '../log.js';
import type { PrivateFolder } from '../session/private-folder.js';
import { openStatusFile, type StatusTiming } from './delivery-status.js';
import { StatusBoard, type BoardDoorbell } from './status-board.js';
import { StatusWriter } from './status-writer.js';

export interface PluginStatusOptions {
  doorbells: readonly BoardDoorbell[];
  pushMode: 'relay' | 'direct';
  /** The configured doorbell access token is used instead of an account's session. */
  usesToken: boolean;
  folder: PrivateFolder;
  log: Logger;
  timing?: StatusTiming;
}

/**
 * status.json for the settings page, kept by the running plugin from launch to shutdown: `board`
 * takes what happens, and every change is written soon after, never on the way it was told.
 */
export class PluginStatus {
  readonly board: StatusBoard;
  private readonly writer: StatusWriter;

  constructor({ doorbells, pushMode, usesToken, folder, log, timing }: PluginStatusOptions) {
    this.writer = new StatusWriter(openStatusFile(folder, log), () => this.board.snapshot(), log, timing);
    this.board = new StatusBoard(doorbells, { pushMode, usesToken }, () => this.writer.changed());
  }

  /** The first status is written at once, then kept fresh. */
  start(): void {
    this.writer.changed();
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  /** `listener`, with what the connection tells it recorded on the board as well. */
  following(listener: ConnectionListener): ConnectionListener {
    const { board } = this;
    return {
      subscribed: (deviceId) => {
        listener.subscribed(deviceId);
        board.subscribed(deviceId);
      },
      subscriptionFailed: (deviceId, error) => {
        listener.subscriptionFailed(deviceId, error);
        board.subscriptionFailed(deviceId, error);
      },
      sessionUnavailable: (why) => {
        listener.sessionUnavailable(why);
        board.sessionUnavailable(why);
      },
      progressed: (progress) => {
        listener.progressed?.(progress);
        board.connectionProgressed(progress);
      },
    };
  }
}

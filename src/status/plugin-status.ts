import type { AlertsRecord } from '../alerts/alerts-state.js';
import type { ConnectionListener } from '../connection/progress.js';
import type { Logger } from '../log.js';
import type { PrivateFolder } from '../session/private-folder.js';
import { openStatusFile, type DeliveryStatus, type StatusTiming } from './delivery-status.js';
import { StatusBoard, type BoardDoorbell } from './status-board.js';
import { StatusWriter, type StatusSink } from './status-writer.js';

export interface PluginStatusOptions {
  doorbells: readonly BoardDoorbell[];
  pushMode: 'relay' | 'direct';
  /** The configured doorbell access token is used instead of an account's session. */
  usesToken: boolean;
  folder: PrivateFolder;
  log: Logger;
  timing?: StatusTiming;
  /** What status.json is written through: the file itself when absent; the soak puts a full disk in between. */
  sink?: (file: StatusSink) => StatusSink;
  /**
   * Whether alerts flow, and the outages: handed what the last run wrote before the first write (so
   * they survive a restart), then written with the rest.
   */
  alerts?: { restoreRecord(previous: Partial<AlertsRecord> | undefined): void; record(): AlertsRecord | undefined };
}

/**
 * status.json for the settings page, kept by the running plugin from launch to shutdown: `board`
 * takes what happens, and every change is written soon after, never on the way it was told.
 */
export class PluginStatus {
  readonly board: StatusBoard;
  private readonly writer: StatusWriter;
  private readonly file: ReturnType<typeof openStatusFile>;
  private readonly alerts: PluginStatusOptions['alerts'];
  /** Nothing is written before the last run's file has been read. */
  private started = false;

  constructor({ doorbells, pushMode, usesToken, folder, log, timing, alerts, sink = (file) => file }: PluginStatusOptions) {
    this.file = openStatusFile(folder, log);
    this.alerts = alerts;
    this.writer = new StatusWriter(sink(this.file), () => this.snapshot(), log, timing);
    this.board = new StatusBoard(doorbells, { pushMode, usesToken }, () => this.changed());
  }

  /** The last run's file is read, then the first status is written at once and kept fresh. */
  start(): void {
    void this.file
      .read()
      .catch(() => undefined)
      .then((previous) => {
        this.alerts?.restoreRecord(previous);
        this.started = true;
        this.writer.changed();
      });
  }

  /** Something changed that the status shows: it is written soon, never at once. */
  changed(): void {
    if (this.started) {
      this.writer.changed();
    }
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  private snapshot(): DeliveryStatus {
    return { ...this.board.snapshot(), ...this.alerts?.record() };
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
      sessionInUse: (signedInAt) => {
        listener.sessionInUse?.(signedInAt);
        board.sessionInUse(signedInAt);
      },
      progressed: (progress) => {
        listener.progressed?.(progress);
        board.connectionProgressed(progress);
      },
      connectFailed: (stage, error) => listener.connectFailed?.(stage, error),
    };
  }
}

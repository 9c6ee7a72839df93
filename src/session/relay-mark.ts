import { createHash } from 'node:crypto';
import { isJsonObject, isNonEmptyString } from '../values/json.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from '../storage/data-folder.js';
import { JsonFile } from '../storage/json-file.js';
import type { PrivateFolder } from '../storage/data-folder.js';

/**
 * Where a relay stream picks up after a restart: after the last message handled, or, when none was
 * handled yet, from a time on the relay's own clock (unix seconds). One of the two.
 */
export type RelayMark = { lastMessageId: string } | { relayTime: number };

/**
 * relay.json: the mark, and the relay and topic it belongs to. The topic is a secret, so the file
 * holds only its SHA-256: enough to tell that the mark is this topic's, nothing to publish with.
 */
type StoredRelayMark = { relayUrl: string; topicSha256: string } & Partial<{ lastMessageId: string; relayTime: number }>;

/**
 * The relay stream's mark, kept between runs, so that the first stream after a restart asks the
 * relay for what it received meanwhile. A mark of another relay or topic means nothing for this one.
 */
export class RelayMarkStore {
  private readonly file: JsonFile<StoredRelayMark>;

  constructor(folder: PrivateFolder, private readonly log: Logger) {
    this.file = new JsonFile(folder, DATA_FILES.relay, isStoredRelayMark, log);
  }

  /**
   * The mark kept for this relay and topic; undefined when there is none (a first run says nothing,
   * a corrupt file is said by the file). Throws a FileReadError when the file cannot be read now.
   */
  async read(relayUrl: string, topic: string): Promise<RelayMark | undefined> {
    const stored = await this.file.read();
    if (stored === undefined) {
      return undefined;
    }
    if (stored.relayUrl !== relayUrl || stored.topicSha256 !== topicHash(topic)) {
      this.log.debug(`${this.file.path} holds the mark of another relay or topic: the stream asks only for new messages.`);
      return undefined;
    }
    return stored.lastMessageId !== undefined ? { lastMessageId: stored.lastMessageId } : { relayTime: stored.relayTime as number };
  }

  /** Replaces the file: this plugin is its only writer, and what it held is older than the mark. */
  write(relayUrl: string, topic: string, mark: RelayMark): Promise<void> {
    return this.file.replace({ relayUrl, topicSha256: topicHash(topic), ...mark });
  }
}

function topicHash(topic: string): string {
  return createHash('sha256').update(topic, 'utf8').digest('hex');
}

function isStoredRelayMark(value: unknown): value is StoredRelayMark {
  if (!isJsonObject(value) || !isNonEmptyString(value.relayUrl) || typeof value.topicSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.topicSha256)) {
    return false;
  }
  const { lastMessageId, relayTime } = value;
  const hasId = isNonEmptyString(lastMessageId);
  const hasTime = typeof relayTime === 'number' && Number.isFinite(relayTime) && relayTime >= 0;
  // Exactly one of the two: a file holding both, or neither, was not written by this plugin.
  return hasId !== hasTime && (hasId ? relayTime === undefined : lastMessageId === undefined);
}

import type { Since } from './since.js';
import type { RelayMessage } from './types.js';

interface Entry {
  /** Arrival order across all topics, as ntfy's row id: `since=<id>` compares it, not the time. */
  sequence: number;
  message: RelayMessage;
}

/** The messages kept for `since=` and `poll=1`, until their `expires` second has come. */
export class MessageCache {
  private entries: Entry[] = [];
  private nextSequence = 1;

  /** `nowSeconds`: the relay's clock, in unix seconds. */
  constructor(private readonly nowSeconds: () => number) {}

  add(message: RelayMessage): void {
    this.entries.push({ sequence: this.nextSequence, message });
    this.nextSequence += 1;
  }

  /** The topic's messages, oldest first. */
  messages(topic: string): RelayMessage[] {
    return this.live()
      .filter(({ message }) => message.topic === topic)
      .map(({ message }) => message);
  }

  /** What a subscription to `topics` asking `since` gets first: all topics together, by time, as ntfy sends them. */
  select(topics: ReadonlySet<string>, since: Since): RelayMessage[] {
    const candidates = this.live().filter(({ message }) => topics.has(message.topic));
    return this.sinceFilter(candidates, since)
      .sort((a, b) => a.message.time - b.message.time || a.sequence - b.sequence)
      .map(({ message }) => message);
  }

  private sinceFilter(entries: Entry[], since: Since): Entry[] {
    switch (since.kind) {
      case 'all':
        return entries;
      case 'none':
        return [];
      case 'time':
        return entries.filter(({ message }) => message.time >= since.seconds);
      case 'latest':
        return newestPerTopic(entries);
      case 'id': {
        // As ntfy: an id it no longer (or never) had means the client missed everything still cached.
        const mark = this.live().find(({ message }) => message.id === since.id)?.sequence ?? 0;
        return entries.filter(({ sequence }) => sequence > mark);
      }
    }
  }

  /** Drops expired messages first: ntfy never answers with one, even before its pruner runs. */
  private live(): Entry[] {
    const now = this.nowSeconds();
    this.entries = this.entries.filter(({ message }) => message.expires > now);
    return this.entries;
  }
}

/** Entries come in arrival order, so on equal times the later one wins, as ntfy orders by time, then row id. */
function newestPerTopic(entries: Entry[]): Entry[] {
  const newest = new Map<string, Entry>();
  for (const entry of entries) {
    const current = newest.get(entry.message.topic);
    if (current === undefined || entry.message.time >= current.message.time) {
      newest.set(entry.message.topic, entry);
    }
  }
  return [...newest.values()];
}

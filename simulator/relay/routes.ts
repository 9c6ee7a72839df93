/** ntfy's topic names: case-sensitive, 1 to 64 of these characters. */
const TOPIC = '[-_A-Za-z0-9]{1,64}';
const TOPIC_NAME = new RegExp(`^${TOPIC}$`);
const SUBSCRIBE_PATH = new RegExp(`^/(${TOPIC}(?:,${TOPIC})*)/json$`);
const PUBLISH_PATH = new RegExp(`^/(${TOPIC})$`);

export type RelayRoute =
  /** `topicsText` is the comma list as the URL has it: open and keepalive lines carry it as their topic. */
  | { kind: 'subscribe'; topics: ReadonlySet<string>; topicsText: string }
  | { kind: 'publish'; topic: string };

export function isTopicName(text: string): boolean {
  return TOPIC_NAME.test(text);
}

/**
 * The two routes of ntfy's API this relay serves: the JSON stream and the publish by PUT or POST.
 * Anything else is unrouted, and ntfy answers an unrouted request 404, never 405.
 */
export function matchRelayRoute(method: string, path: string): RelayRoute | undefined {
  const subscribe = method === 'GET' ? SUBSCRIBE_PATH.exec(path) : null;
  if (subscribe !== null) {
    return { kind: 'subscribe', topics: new Set(subscribe[1].split(',')), topicsText: subscribe[1] };
  }
  const publish = method === 'PUT' || method === 'POST' ? PUBLISH_PATH.exec(path) : null;
  return publish === null ? undefined : { kind: 'publish', topic: publish[1] };
}

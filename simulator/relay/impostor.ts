import type { Reply } from '../incoming.js';
import type { StreamRegistry } from './streams.js';
import type { StreamStart } from './subscribe.js';
import type { Impostor } from './types.js';

/** What a captive portal answers whatever was asked: a whole page, then the end of the answer. */
export const PORTAL_PAGE =
  '<!DOCTYPE html>\n<html><head><title>Wi-Fi sign-in</title></head>\n<body><h1>Accept the terms to use this network</h1></body></html>\n';

/** What a stuck server trickles: never a whole line, so it neither proves a stream nor ends one. */
export const TRICKLE = '.';

const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8' };

/** A 200 answer to a subscribe request that is no ntfy stream, as `impostor` says (see Relay.impersonate). */
export function impostorAnswer(impostor: Impostor, streams: StreamRegistry): Reply | StreamStart {
  if (impostor === 'web-page') {
    return { status: 200, headers: HTML_HEADERS, body: PORTAL_PAGE };
  }
  return {
    status: 200,
    start: (response) => {
      response.writeHead(200, HTML_HEADERS);
      response.flushHeaders();
      // It follows no topic, so nothing published or injected reaches it; dropStreams and close end it.
      streams.open(new Set(), response, () => TRICKLE).send(TRICKLE);
    },
  };
}

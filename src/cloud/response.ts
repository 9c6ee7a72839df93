/** What a service answered, body as text. */
export interface CloudResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** The body as JSON; undefined when it is not JSON. */
export function parseJsonBody({ body }: CloudResponse): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // The parser's message quotes the body, which may hold anything: say only that it is not JSON.
    return undefined;
  }
}

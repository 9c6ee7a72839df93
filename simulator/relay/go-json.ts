/**
 * Go's encoding/json escapes these even inside strings (`<` as `\u003c`), and ntfy writes every line
 * and answer with it; a client must cope, so the relay writes them the same way. JSON.stringify can
 * only produce them inside strings, so replacing them everywhere is safe.
 */
const GO_ESCAPED = /[<>&\u2028\u2029]/g;

function goEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The compact JSON Go's encoder writes for `value`, without the trailing newline. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(GO_ESCAPED, goEscape);
}

/** One line of the JSON stream, or the body of a JSON answer: Go's json.Encoder ends each with '\n'. */
export function goJsonLine(value: unknown): string {
  return `${goJson(value)}\n`;
}

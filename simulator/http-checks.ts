import { headerValues } from './incoming.js';
import type { IncomingRequest } from './incoming.js';
import type { RequestCheck } from './request-check.js';

/**
 * Checks of the HTTP envelope of a request: headers, media type, presence of a body, bearer token.
 * Each records its violations in the check; a returned value is meaningful only when nothing
 * refused the request.
 */

/** The one value of a required header (undefined when missing or repeated). */
export function requireSingleHeader(check: RequestCheck, request: IncomingRequest, name: string): string | undefined {
  const values = headerValues(request, name);
  if (values.length !== 1) {
    check.violation(values.length === 0 ? `missing header ${name}` : `header ${name} sent ${values.length} times`);
    return undefined;
  }
  return values[0];
}

export function requireHeaderAbsent(check: RequestCheck, request: IncomingRequest, name: string): void {
  if (headerValues(request, name).length > 0) {
    check.violation(`header ${name} must not be sent`);
  }
}

/** "No body" means Content-Length 0 or none, never a chunked empty body. */
export function requireNoBody(check: RequestCheck, request: IncomingRequest): void {
  const length = request.headers['content-length'];
  if (request.body !== '' || request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
    check.violation('this request takes no body (send Content-Length: 0 or none)');
  }
}

/** The media type must match exactly; the only parameter tolerated is charset=utf-8, which axios adds. */
export function requireMediaType(check: RequestCheck, request: IncomingRequest, expected: string, status: number): void {
  const values = headerValues(request, 'content-type');
  const [type = '', ...parameters] = (values.length === 1 ? values[0] : '').split(';').map((part) => part.trim());
  const parametersOk = parameters.every((parameter) => /^charset="?utf-8"?$/i.test(parameter));
  if (type.toLowerCase() !== expected || !parametersOk) {
    check.violation(`Content-Type must be ${expected}`, status);
  }
}

/** The bearer token of a well-formed Authorization header ('' when refused). */
export function requireBearer(check: RequestCheck, request: IncomingRequest, isActive: (token: string) => boolean): string {
  const challenge = { 'www-authenticate': 'Bearer' };
  const values = headerValues(request, 'authorization');
  if (values.length !== 1) {
    check.violation(values.length === 0 ? 'missing Authorization header' : 'Authorization header sent more than once', 401, challenge);
    return '';
  }
  const token = /^Bearer ([^\s]+)$/.exec(values[0])?.[1];
  if (token === undefined) {
    check.violation('Authorization must be "Bearer <access token>"', 401, challenge);
    return '';
  }
  if (!isActive(token)) {
    check.refuse('access token is unknown or revoked: sign in again', 401, challenge);
    return '';
  }
  return token;
}

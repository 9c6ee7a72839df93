import { createHash } from 'node:crypto';
import { loginReply, regionReply, serviceError } from './account-data.js';
import { readExactFields, requireAccountFieldFormats, requireEmailField, requireFieldFormat } from './field-checks.js';
import { requireHeaderAbsent, requireMediaType, requireNoBody, requireSingleHeader } from './http-checks.js';
import type { IncomingRequest } from './incoming.js';
import type { RouteContext } from './route-context.js';
import type { ServiceState } from './state.js';
import { RequestCheck } from './request-check.js';
import type { Evaluation } from './request-check.js';

/** The account service: region resolution (account server) and code login (regional server). */

const UNKNOWN_ACCOUNT = [2008, 'account not exist'] as const;
const INVALID_CODE = [2018, 'verification code is invalid'] as const;

/** POST /api/v1/getUrlByEmail?email=…&needtwostepauth=false */
export function evaluateRegion(request: IncomingRequest, context: RouteContext): Evaluation {
  const check = new RequestCheck(request.service);
  const query = readExactFields(check, request.rawQuery, ['email', 'needtwostepauth'], 'query');
  const email = requireEmailField(check, query, 'query');
  requireFieldFormat(check, query, 'needtwostepauth', /^false$/, 'exactly "false"');
  requireNoBody(check, request);
  requireHeaderAbsent(check, request, 'authorization');
  check.account = context.state.findAccount(email)?.email;
  return check.conclude(() => {
    const profile = context.state.findAccount(email);
    return profile ? regionReply(profile, context.regionalUrl) : serviceError(...UNKNOWN_ACCOUNT);
  });
}

/** The client headers whose value the service fixes. */
const FIXED_HEADERS: Record<string, string> = {
  header_clientlang: 'en',
  header_appversion: '4.54.02',
  header_phonesystem: 'Android',
  header_phonemodel: 'Pixel 7',
};

const LOGIN_FIELDS = ['code', 'country', 'countryCode', 'email', 'majorVersion', 'minorVersion'];

const NON_NEGATIVE_INTEGER = /^(0|[1-9][0-9]{0,8})$/;

/** POST /api/v4/auth/email/login/code, form-encoded, with the seven client headers. */
export function evaluateLogin(request: IncomingRequest, context: RouteContext): Evaluation {
  const check = new RequestCheck(request.service);
  requireClientHeaders(check, request, context.state);
  requireHeaderAbsent(check, request, 'authorization');
  requireMediaType(check, request, 'application/x-www-form-urlencoded', 400);
  const form = readExactFields(check, request.body, LOGIN_FIELDS, 'body');
  const { code } = requireAccountFieldFormats(check, form);
  requireFieldFormat(check, form, 'majorVersion', NON_NEGATIVE_INTEGER, 'a non-negative decimal integer');
  requireFieldFormat(check, form, 'minorVersion', NON_NEGATIVE_INTEGER, 'a non-negative decimal integer');
  const email = requireEmailField(check, form, 'body');
  check.account = context.state.findAccount(email)?.email;
  return check.conclude(() => {
    const outcome = context.state.login(email, code);
    if (outcome === 'unknown account') {
      return serviceError(...UNKNOWN_ACCOUNT);
    }
    if (outcome === 'invalid code') {
      return serviceError(...INVALID_CODE);
    }
    return loginReply(outcome.profile, outcome.identity, outcome.token);
  });
}

function requireClientHeaders(check: RequestCheck, request: IncomingRequest, state: ServiceState): void {
  if (requireSingleHeader(check, request, 'header_clientid') === '') {
    check.violation('header header_clientid must not be empty');
  }
  for (const [name, expected] of Object.entries(FIXED_HEADERS)) {
    const value = requireSingleHeader(check, request, name);
    if (value !== undefined && value !== expected) {
      check.violation(`header ${name} must be exactly ${JSON.stringify(expected)}`);
    }
  }
  const ks = requireSingleHeader(check, request, 'x-mercy-ks');
  const k = requireSingleHeader(check, request, 'x-mercy-k');
  if (ks === undefined) {
    return;
  }
  if (!/^[A-Za-z0-9]{16}$/.test(ks)) {
    check.violation('header x-mercy-ks must be 16 letters and digits');
  } else if (!state.firstUseOfMercyKs(ks)) {
    check.violation('header x-mercy-ks was used before: it must be new on every request');
  }
  // The project's chosen derivation: x-mercy-k is the lowercase hex SHA-256 of x-mercy-ks.
  if (k !== undefined && k !== createHash('sha256').update(ks).digest('hex')) {
    check.violation('header x-mercy-k must be the lowercase hex SHA-256 of x-mercy-ks');
  }
}

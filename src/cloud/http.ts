import { createRequire } from 'node:module';
import type { AxiosInstance, AxiosResponse, AxiosStatic } from 'axios';
import pRetry from 'p-retry';
import { insecureUrlProblem } from '../values/address.js';
import { backoffDelay, honouringRetryAfter } from '../values/backoff.js';
import { type CloudResponse, readServiceAnswer } from './envelope.js';
import { CloudError } from './errors.js';
import { DEFAULT_RETRY_POLICY, honoursRetryAfter, parseRetryAfter, type RetryPolicy } from './retry-policy.js';

/** HTTP for the cloud services: axios, the retries, the https rule, answers cut off past 1 MiB. */

/**
 * axios, the plugin's one HTTP client, as its CommonJS build: the one Node's `require` resolves to.
 * One module, where its ES module build is some sixty, each with a record of its own that stays in
 * memory for the life of Homebridge (a third of a MiB, measured with `npm run bench`).
 */
export const axios = createRequire(import.meta.url)('axios') as AxiosStatic;

/** Where the cloud layer writes its one debug line per request. */
export interface CloudLogger {
  debug(message: string): void;
}

const { isAxiosError, isCancel } = axios;

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The most of an answer that is read. The largest the services send is the device list of an account
 * with many doorbells, tens of KiB; an answer past this comes from somewhere else and would only fill
 * memory, so it is cut off.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** axios labels even an empty POST as a form; `false` stops it: there is no body to describe. */
const NO_BODY_HEADERS = { 'Content-Type': false } as const;

export interface CloudHttpOptions {
  baseUrl: string;
  logger?: CloudLogger;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  /** Tests lower it; MAX_ANSWER_BYTES otherwise. */
  maxAnswerBytes?: number;
  /**
   * The service answers in `{code, msg, data}` envelopes, refusals included: a refusal without one
   * came from something in between (a proxy, a firewall), and its error says so.
   */
  envelopes?: boolean;
}

export interface CloudRequest {
  method: 'GET' | 'POST' | 'PATCH';
  /** Relative to the base address, without a query. */
  path: string;
  query?: URLSearchParams;
  /** Called once per attempt, so a per-request value is fresh on every retry too. */
  headers?: () => Record<string, string>;
  /** URLSearchParams are sent form-encoded, plain objects as JSON. */
  body?: URLSearchParams | object;
  /** The code, a token or the push token: such a request goes over https only. */
  carriesSecrets: boolean;
  signal?: AbortSignal;
}

/** The axios instance every cloud request goes through: one base address, a timeout, a size limit, no surprises. */
function createCloudAxios(baseUrl: string, timeoutMs: number, maxAnswerBytes: number): AxiosInstance {
  return axios.create({
    baseURL: baseUrl,
    timeout: timeoutMs,
    maxContentLength: maxAnswerBytes,
    // The body stays text so an HTML error page or an empty body is told apart from an envelope.
    responseType: 'text',
    transitional: { forcedJSONParsing: false, clarifyTimeoutError: true },
    // Every status reaches the retry policy and the error mapping below.
    validateStatus: () => true,
    // A redirect would carry the token or the code to an address nobody checked, even plain http.
    maxRedirects: 0,
  });
}

/** Sends one call with the retry policy, the https rule and a debug line per attempt. */
export class CloudHttp {
  private readonly axios: AxiosInstance;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly maxAnswerBytes: number;

  constructor(private readonly options: CloudHttpOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.axios = createCloudAxios(options.baseUrl, this.timeoutMs, this.maxAnswerBytes);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  /** Resolves with a 2xx answer; rejects with a CloudError. */
  async send(request: CloudRequest): Promise<CloudResponse> {
    if (request.carriesSecrets) {
      requireSecureUrl(this.options.baseUrl, request);
    }
    const { policy } = this;
    try {
      return await pRetry(() => this.attempt(request), {
        retries: policy.retries,
        // p-retry runs the attempts and counts the retries but waits nothing itself: waitIfRetrying waits
        // the backoff every retry follows, whose jitter, unlike p-retry's own, still jitters a capped wait.
        minTimeout: 0,
        signal: request.signal,
        shouldRetry: ({ error, retriesConsumed }) => this.waitIfRetrying(error, retriesConsumed, request.signal),
      });
    } catch (error) {
      // p-retry rejects with the signal's reason, whether it was waiting or an attempt was running.
      if (request.signal?.aborted) {
        throw new CloudError({ kind: 'aborted', method: request.method, path: request.path });
      }
      throw error;
    }
  }

  /**
   * Retries what the error says is retryable, after the backoff's wait for the `failures` before this
   * one, or a Retry-After the server sent when that is longer.
   */
  private async waitIfRetrying(error: Error, failures: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (!(error instanceof CloudError) || !error.retryable) {
      return false;
    }
    if (error.retryAfterMs !== undefined && error.retryAfterMs > this.policy.maxRetryAfterMs) {
      return false;
    }
    await this.policy.wait(honouringRetryAfter(backoffDelay(this.policy.backoff, failures), error.retryAfterMs), signal);
    return true;
  }

  private async attempt(request: CloudRequest): Promise<CloudResponse> {
    const started = performance.now();
    const logOutcome = (outcome: string): void =>
      this.options.logger?.debug(`${request.method} ${request.path} ${outcome} ${Math.round(performance.now() - started)} ms`);
    let response: AxiosResponse<string>;
    try {
      response = await this.axios.request<string>({
        method: request.method,
        url: request.path,
        params: request.query,
        headers: { ...request.headers?.(), ...(request.body === undefined ? NO_BODY_HEADERS : {}) },
        data: request.body,
        signal: request.signal,
      });
    } catch (error) {
      const failure = this.transportFailure(request, error);
      logOutcome(failure.kind);
      throw failure;
    }
    logOutcome(String(response.status));
    const answer: CloudResponse = {
      status: response.status,
      contentType: headerValue(response.headers['content-type']),
      body: response.data,
    };
    if (answer.status >= 200 && answer.status < 300) {
      return answer;
    }
    throw statusFailure(request, answer, headerValue(response.headers['retry-after']), this.options.envelopes === true);
  }

  private transportFailure(request: CloudRequest, error: unknown): CloudError {
    const known = { method: request.method, path: request.path, cause: error instanceof Error ? error : undefined };
    if (isCancel(error) || request.signal?.aborted) {
      return new CloudError({ kind: 'aborted', ...known });
    }
    const code = isAxiosError(error) ? error.code : undefined;
    if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') {
      return new CloudError({ kind: 'timeout', ...known, detail: `none within ${this.timeoutMs} ms` });
    }
    // axios tells the cut-off answer from a broken one by its message alone.
    if (code === 'ERR_BAD_RESPONSE' && error instanceof Error && error.message.includes('maxContentLength')) {
      return new CloudError({ kind: 'too-large', ...known, detail: describeSize(this.maxAnswerBytes) });
    }
    return new CloudError({ kind: 'network', ...known, detail: code });
  }
}

function statusFailure(request: CloudRequest, response: CloudResponse, retryAfter: string | undefined, envelopes: boolean): CloudError {
  const answer = readServiceAnswer(response);
  return new CloudError({
    detail: envelopes && answer === undefined ? 'not what the service sends' : undefined,
    kind: response.status === 401 ? 'unauthorized' : 'http',
    method: request.method,
    path: request.path,
    status: response.status,
    serviceCode: answer?.code,
    serviceMsg: answer?.msg,
    retryAfterMs: honoursRetryAfter(response.status) ? parseRetryAfter(retryAfter) : undefined,
  });
}

function describeSize(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

function headerValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Checked before anything is sent. */
function requireSecureUrl(baseUrl: string, request: Pick<CloudRequest, 'method' | 'path'>): void {
  const problem = insecureUrlProblem(baseUrl);
  if (problem !== undefined) {
    throw new CloudError({ kind: 'insecure', method: request.method, path: request.path, detail: problem });
  }
}

/**
 * What the directory answered, checked: a 2xx body parsed as JSON and validated against the
 * endpoint's schema, any other status or a failed request turned into one of errors.ts, with
 * the directory's own words cut and the token scrubbed from whatever may be shown.
 */
import type { z } from 'zod';
import { retryAfterFromHeaders } from '../http/retry-after.js';
import {
  BadRequestError,
  type DirectoryError,
  type ErrorContext,
  ForbiddenError,
  InvalidResponseError,
  isDirectoryError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from './errors.js';
import { errorBodySchema, fastifyErrorSchema } from './schemas.js';
import type { TransportResponse } from './transport.js';

/** Which request an answer is to, for the errors. */
export interface Context {
  method: string;
  route: string;
}

const EXCERPT_LENGTH = 200;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body of a 2xx answer as the schema's output; throws InvalidResponseError or the status's error. */
export function parseAnswer<S extends z.ZodType>(
  response: TransportResponse,
  context: Context,
  schema: S | ((receivedAt: number) => S),
  token: string | undefined,
): z.output<S> {
  if (response.status < 200 || response.status >= 300) throw statusError(response, context, token);
  return checked(parseJson(response, context, token), response, context, schema, token);
}

/** `json` (from `response`) as the schema's output; throws InvalidResponseError when it does not fit. */
export function checked<S extends z.ZodType>(
  json: unknown,
  response: TransportResponse,
  context: Context,
  schema: S | ((receivedAt: number) => S),
  token: string | undefined,
): z.output<S> {
  const resolved = typeof schema === 'function' ? schema(response.receivedAt) : schema;
  const parsed = resolved.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new InvalidResponseError(`the directory's answer to ${context.method} does not fit: ${where}`, {
      ...context,
      status: response.status,
      excerpt: excerpt(response.text, token),
    });
  }
  return parsed.data;
}

export function parseJson(response: TransportResponse, context: Context, token: string | undefined): unknown {
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    throw new InvalidResponseError(`the directory's answer to ${context.method} is not JSON`, {
      ...context,
      status: response.status,
      excerpt: excerpt(response.text, token),
    });
  }
}

/** The first characters of a body, with the token scrubbed in case a proxy echoes it. */
export function excerpt(text: string, token: string | undefined): string {
  let cut = text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH)}…` : text;
  if (token) cut = cut.split(token).join('[REDACTED]');
  return cut.replace(/\s+/g, ' ').trim();
}

/** The directory's own error text, cut and scrubbed: it becomes an error message. */
export function errorMessage(text: string, token: string | undefined): string | undefined {
  return scrubbed(rawErrorMessage(text), token);
}

/** A message of the directory's, cut to 300 characters, the token scrubbed. */
export function scrubbed(message: string | undefined, token: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  let clean = message.length > 300 ? `${message.slice(0, 300)}…` : message;
  if (token) clean = clean.split(token).join('[REDACTED]');
  return clean;
}

function rawErrorMessage(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const usual = errorBodySchema.safeParse(json);
  if (usual.success && usual.data.error.message) return usual.data.error.message;
  const fastify = fastifyErrorSchema.safeParse(json);
  if (fastify.success && (fastify.data.message || fastify.data.error)) {
    return fastify.data.message ?? fastify.data.error;
  }
  if (isRecord(json) && typeof json.message === 'string') return json.message;
  return undefined;
}

/** The error for an answer that is not a 2xx. */
export function statusError(
  response: TransportResponse,
  context: Context,
  token: string | undefined,
  /** v3: the envelope's first error, already read (its message, cut and scrubbed, and its code). */
  given?: { message: string | undefined; apiCode: ErrorContext['apiCode'] },
): DirectoryError {
  const { status } = response;
  const message = given ? given.message : errorMessage(response.text, token);
  const ctx = { ...context, status, ...(given?.apiCode ? { apiCode: given.apiCode } : {}) };
  switch (true) {
    case status === 400:
      return new BadRequestError(message ?? 'Bad request', ctx);
    case status === 401:
      return new UnauthorizedError(message ?? 'Unauthorized', ctx);
    case status === 403:
      return new ForbiddenError(message ?? 'Forbidden', ctx);
    case status === 404:
      return new NotFoundError(message ?? 'Not found', ctx);
    case status === 429: {
      const fromBody = /retry in (\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|seconds?)/i.exec(message ?? '');
      const retryAfterMs =
        retryAfterFromHeaders(response.headers, response.receivedAt) ??
        (fromBody ? Math.ceil(Number(fromBody[1]) * (fromBody[2]?.startsWith('m') ? 1 : 1000)) : undefined);
      return new RateLimitedError(message ?? 'Too many requests', { ...ctx, retryAfterMs });
    }
    case status >= 500:
      return new UnavailableError(`the directory answered ${status}${message ? `: ${message}` : ''}`, {
        ...ctx,
        reason: 'status',
      });
    default:
      return new InvalidResponseError(`the directory answered an unexpected ${status}`, {
        ...ctx,
        excerpt: excerpt(response.text, token),
      });
  }
}

/** The error for a request that got no answer: cancelled, timed out, or the network failed. */
export function networkError(
  err: unknown,
  context: Context,
  signal: AbortSignal | undefined,
): DirectoryError {
  if (isDirectoryError(err)) return err;
  const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  if (signal?.aborted) {
    return new UnavailableError(`${context.method} was cancelled`, {
      ...context,
      reason: 'timeout',
      cause: err,
    });
  }
  const timeout =
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT';
  return new UnavailableError(
    timeout
      ? `the directory did not answer ${context.method} in time`
      : `could not reach the directory for ${context.method}${code ? ` (${code})` : ''}`,
    { ...context, reason: timeout ? 'timeout' : 'network', cause: sanitizeCause(err) },
  );
}

/** Keep only the name, code and message of a low-level error: undici errors can carry request options. */
function sanitizeCause(err: unknown): Error | undefined {
  if (!(err instanceof Error)) return undefined;
  const copy = new Error(err.message);
  copy.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  return copy;
}

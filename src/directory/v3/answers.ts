/**
 * What v3 answered, checked: its envelope opened (`{ ok: true, result }`), `result` validated
 * against the endpoint's schema, an error envelope (`{ ok: false, errors: [{ code, message }] }`)
 * turned into one of errors.ts naming the directory's code. The class comes from the HTTP status
 * where it is one of the documented six, else from the code (codes.ts): a 429 or code 1 is
 * RateLimited whatever came with it, with the documented 10 s block when no Retry-After says
 * otherwise. The search service answers Meilisearch's own JSON, which has no envelope.
 */
import type { z } from 'zod';
import { retryAfterFromHeaders } from '../../http/retry-after.js';
import { type Context, checked, excerpt, parseJson, scrubbed, statusError } from '../answers.js';
import {
  BadRequestError,
  type DirectoryError,
  ForbiddenError,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from '../errors.js';
import type { TransportResponse } from '../transport.js';
import { V3_BLOCK_MS, v3CodeName, v3ErrorClass } from './codes.js';
import { v3EnvelopeSchema } from './schemas.js';

const DOCUMENTED_STATUSES = new Set([400, 401, 403, 404, 429]);

/** The envelope's `result` as the schema's output, or the error it carries. */
export function parseV3Answer<S extends z.ZodType>(
  response: TransportResponse,
  context: Context,
  schema: S,
  token: string | undefined,
): z.output<S> {
  const ok = response.status >= 200 && response.status < 300;
  let json: unknown;
  try {
    json = parseJson(response, context, token);
  } catch (err) {
    // A proxy's HTML page, say: the status alone tells what happened.
    if (!ok) throw statusError(response, context, token);
    throw err;
  }
  const envelope = v3EnvelopeSchema.safeParse(json);
  if (envelope.success && envelope.data.ok && ok) {
    return checked(envelope.data.result, response, context, schema, token);
  }
  const first = envelope.success && !envelope.data.ok ? envelope.data.errors?.[0] : undefined;
  if (!ok || first) throw v3Error(response, context, token, first);
  throw new InvalidResponseError(`the directory's answer to ${context.method} is not v3's { ok, result }`, {
    ...context,
    status: response.status,
    excerpt: excerpt(response.text, token),
  });
}

/** A search answer (Meilisearch's JSON, no envelope), or the error of its status. */
export function parseSearchAnswer<S extends z.ZodType>(
  response: TransportResponse,
  context: Context,
  schema: S,
  token: string | undefined,
): z.output<S> {
  if (response.status < 200 || response.status >= 300) throw statusError(response, context, token);
  return checked(parseJson(response, context, token), response, context, schema, token);
}

function v3Error(
  response: TransportResponse,
  context: Context,
  token: string | undefined,
  first: { code: number; message?: string | undefined } | undefined,
): DirectoryError {
  const apiCode = first ? { code: first.code, name: v3CodeName(first.code) } : undefined;
  const message = scrubbed(first?.message ?? apiCode?.name, token);
  const { status } = response;
  const rateLimited = status === 429 || first?.code === 1;
  if (!rateLimited && (DOCUMENTED_STATUSES.has(status) || status >= 500 || !first)) {
    return statusError(response, context, token, { message, apiCode });
  }
  const ctx = { ...context, status, apiCode };
  const text = message ?? 'the directory refused the request';
  switch (rateLimited ? 'RateLimited' : v3ErrorClass(first?.code ?? -1)) {
    case 'RateLimited':
      return new RateLimitedError(text, {
        ...ctx,
        retryAfterMs: retryAfterFromHeaders(response.headers, response.receivedAt) ?? V3_BLOCK_MS,
      });
    case 'NotFound':
      return new NotFoundError(text, ctx);
    case 'Unauthorized':
      return new UnauthorizedError(text, ctx);
    case 'Forbidden':
      return new ForbiddenError(text, ctx);
    case 'Unavailable':
      return new UnavailableError(`the directory answered ${text}`, { ...ctx, reason: 'status' });
    default:
      return new BadRequestError(text, ctx);
  }
}

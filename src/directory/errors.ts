/**
 * One error vocabulary from the HTTP boundary up to the user. Every failure of the
 * directory client is one of these classes; the bot maps each to one localized
 * message and the CLI to one exit code. Messages never carry a token.
 */

export type DirectoryErrorCode =
  | 'NotFound'
  | 'Unauthorized'
  | 'Forbidden'
  | 'BadRequest'
  | 'RateLimited'
  | 'Unavailable'
  | 'InvalidResponse'
  | 'TokenKindNotAccepted'
  | 'InvalidArgument';

export interface ErrorContext {
  /** Client method that failed, e.g. `getBot`. */
  method?: string;
  /** HTTP method and route template, e.g. `GET /bot/{ref}` (never the token or query). */
  route?: string;
  status?: number;
  cause?: unknown;
  /** v3: the directory's error code and its name (docs-v3 index.mdx "Error codes"), e.g. 19 UnknownBot. */
  apiCode?: { code: number; name: string } | undefined;
}

export abstract class DirectoryError extends Error {
  abstract readonly code: DirectoryErrorCode;
  readonly method: string | undefined;
  readonly route: string | undefined;
  readonly status: number | undefined;
  /** v3: the directory's own error code and its name, when it gave one. */
  readonly apiCode: { code: number; name: string } | undefined;

  protected constructor(message: string, context: ErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = new.target.name;
    this.method = context.method;
    this.route = context.route;
    this.status = context.status;
    this.apiCode = context.apiCode;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      method: this.method,
      route: this.route,
      status: this.status,
      ...(this.apiCode ? { apiCode: this.apiCode.code, apiCodeName: this.apiCode.name } : {}),
    };
  }
}

/** 404 from the directory; `message` is the directory's own ('Bot not found', ...). */
export class NotFoundError extends DirectoryError {
  readonly code = 'NotFound' as const;
  constructor(message: string, context: ErrorContext = {}) {
    super(message, context);
  }
}

/** 401: the token is wrong, missing or not accepted by the directory. */
export class UnauthorizedError extends DirectoryError {
  readonly code = 'Unauthorized' as const;
  constructor(message = 'Unauthorized', context: ErrorContext = {}) {
    super(message, context);
  }
}

/** 403: e.g. a PrivateBot token on a server that is not one of its permitted five. */
export class ForbiddenError extends DirectoryError {
  readonly code = 'Forbidden' as const;
  constructor(message = 'Forbidden', context: ErrorContext = {}) {
    super(message, context);
  }
}

/** 400 in either of the directory's shapes (its own error object or the schema validator's). */
export class BadRequestError extends DirectoryError {
  readonly code = 'BadRequest' as const;
  constructor(message = 'Bad request', context: ErrorContext = {}) {
    super(message, context);
  }
}

/** 429 from the directory, or a local wait that would pass the caller's deadline. */
export class RateLimitedError extends DirectoryError {
  readonly code = 'RateLimited' as const;
  /** How long to wait before trying again, in ms, when known. */
  readonly retryAfterMs: number | undefined;
  /** True when the client refused locally (no request left); false for a 429 answer. */
  readonly local: boolean;
  constructor(
    message: string,
    context: ErrorContext & { retryAfterMs?: number | undefined; local?: boolean } = {},
  ) {
    super(message, context);
    this.retryAfterMs = context.retryAfterMs;
    this.local = context.local ?? false;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), retryAfterMs: this.retryAfterMs, local: this.local };
  }
}

/**
 * 'limits': the directory was not asked, because the rate limits that several processes share
 * (in their store) could not be read; sending without them could overrun the directory's limits.
 */
export type UnavailableReason = 'status' | 'network' | 'timeout' | 'limits';

/** 5xx, a network failure or a timeout: the directory could not answer. */
export class UnavailableError extends DirectoryError {
  readonly code = 'Unavailable' as const;
  readonly reason: UnavailableReason;
  constructor(message: string, context: ErrorContext & { reason: UnavailableReason }) {
    super(message, context);
    this.reason = context.reason;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), reason: this.reason };
  }
}

/** The directory answered, but not with anything we can use. */
export class InvalidResponseError extends DirectoryError {
  readonly code = 'InvalidResponse' as const;
  /** The first characters of the body, for the operator's log. */
  readonly excerpt: string;
  constructor(message: string, context: ErrorContext & { excerpt: string }) {
    super(message, context);
    this.excerpt = context.excerpt;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), excerpt: this.excerpt };
  }
}

/** The configured token kind is not accepted by this method in API v2; no request was sent. */
export class TokenKindNotAcceptedError extends DirectoryError {
  readonly code = 'TokenKindNotAccepted' as const;
  readonly kind: string;
  readonly accepted: readonly string[];
  constructor(method: string, kind: string, accepted: readonly string[]) {
    super(
      accepted.length === 0
        ? `${method} does not accept a ${kind} token`
        : `${method} does not accept a ${kind} token; it accepts: ${accepted.join(', ')}`,
      { method },
    );
    this.kind = kind;
    this.accepted = accepted;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), kind: this.kind, accepted: this.accepted };
  }
}

/** Bad input from our caller (a malformed reference, a missing token, ...); no request was sent. */
export class InvalidArgumentError extends DirectoryError {
  readonly code = 'InvalidArgument' as const;
  constructor(message: string, context: ErrorContext = {}) {
    super(message, context);
  }
}

export function isDirectoryError(value: unknown): value is DirectoryError {
  return value instanceof DirectoryError;
}

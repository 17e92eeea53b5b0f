/** What the background tasks log of an error: a code for metrics and alerts, and plain words. */
import { isDirectoryError, RateLimitedError } from '../directory/index.js';
import { errorLine } from '../log/error-line.js';

export interface Failure {
  code: string;
  message: string;
  status: number | undefined;
  retryAfterMs: number | undefined;
}

/** Only code, status and message: a foreign error may carry request options with headers. */
export function failureOf(err: unknown): Failure {
  if (isDirectoryError(err)) {
    return {
      code: err.code,
      message: err.message,
      status: err.status,
      retryAfterMs: err instanceof RateLimitedError ? err.retryAfterMs : undefined,
    };
  }
  return {
    code: 'Unexpected',
    message: errorLine(err),
    status: undefined,
    retryAfterMs: undefined,
  };
}

/** A failure as the fields of a log line. */
export function failureFields(failure: Failure): { code: string; status: number | undefined; error: string } {
  return { code: failure.code, status: failure.status, error: failure.message };
}

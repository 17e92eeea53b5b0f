/**
 * The store's two errors. StoreError: the store cannot be used (not opened, not migrated, or a
 * query that is wrong); its message is one plain line that never carries a password.
 * StoreUnavailableError: the database cannot be reached or is busy right now; nothing of the
 * failed call was written, and the same call may work a little later ("try again").
 */

export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(oneLine(message), options);
    this.name = new.target.name;
  }
}

export class StoreUnavailableError extends StoreError {}

/** Error codes that mean "not now" rather than "never": a lost or refused connection, a lock. */
const TRANSIENT_CODES = new Set([
  // Node's socket errors (pg's connection to the server).
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // PostgreSQL: server shutting down or restarting, too many connections, lock timeout,
  // serialization failure and deadlock (the transaction was rolled back).
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '55P03',
  '40001',
  '40P01',
]);

/** pg reports a dropped or unobtainable connection with these messages and no code. */
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /connection error/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
];

export function isTransient(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // PostgreSQL class 08: connection exception.
    if (TRANSIENT_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    // SQLite: another process holds the lock past the busy timeout, the disk is full or failing.
    if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR)/.test(code)) return true;
  }
  if (err instanceof AggregateError && err.errors.some(isTransient)) return true;
  return TRANSIENT_MESSAGES.some((re) => re.test(err.message));
}

/** A failed call as the callers see it: transient failures say so, the rest is a StoreError. */
export function queryError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  if (isTransient(err)) {
    return new StoreUnavailableError(`The database is unavailable: ${reason(err)}`, { cause: err });
  }
  return new StoreError(`A database query failed: ${reason(err)}`, { cause: err });
}

/** An error's own message on one line (an AggregateError's first inner one: pg's connect errors). */
export function reason(err: unknown): string {
  if (err instanceof AggregateError && err.message === '' && err.errors[0] !== undefined) {
    return reason(err.errors[0]);
  }
  if (err instanceof Error) return oneLine(err.message) || err.name;
  return oneLine(String(err));
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

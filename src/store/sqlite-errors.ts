/**
 * What SQLite's error codes mean to the store: busy (another process holds the lock: wait), and
 * the file itself broken (read-only, damaged, full, failing), which waiting does not cure.
 * better-sqlite3 gives the extended code as a string (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE…).
 */

export function codeOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export function isBusy(err: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test(codeOf(err) ?? '');
}

/** How the file is broken, in the words of the store's log line and /readyz. */
export type FileProblem = 'read-only' | 'damaged' | 'full' | 'failing';

/** The file's problem when `err` says it is broken, else undefined (busy, a wrong query…). */
export function fileProblem(err: unknown): FileProblem | undefined {
  const code = codeOf(err) ?? '';
  if (/^SQLITE_(READONLY|PERM)/.test(code)) return 'read-only';
  if (/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return 'damaged';
  if (/^SQLITE_FULL/.test(code)) return 'full';
  if (/^SQLITE_(IOERR|CANTOPEN)/.test(code)) return 'failing';
  return undefined;
}

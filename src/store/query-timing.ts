/**
 * How long the store's statements take, for the metrics (`store_query_duration_seconds`) and the
 * traces: Kysely's own `log` hook, which times each statement it runs, turned into a bounded event
 * (the engine and the statement's kind, never its text or values).
 */
import type { LogConfig, LogEvent } from 'kysely';
import { recordSpan } from '../trace/spans.js';
import type { Engine } from './store.js';

/** What a statement was: its kind from Kysely's query tree, or the first word of raw SQL. */
export type StatementKind = 'select' | 'insert' | 'update' | 'delete' | 'other';

export interface StoreQueryEvent {
  engine: Engine;
  statement: StatementKind;
  durationMs: number;
  failed: boolean;
}

/** Told of every statement once it has run; must not throw (it runs inside Kysely's execution). */
export type StoreQueryListener = (event: StoreQueryEvent) => void;

const KINDS: Readonly<Record<string, StatementKind>> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
};
const WORDS: Readonly<Record<string, StatementKind>> = {
  select: 'select',
  with: 'select',
  insert: 'insert',
  update: 'update',
  delete: 'delete',
};

export function statementKind(event: Pick<LogEvent, 'query'>): StatementKind {
  const kind = KINDS[event.query.query.kind];
  if (kind) return kind;
  const word = /^\s*([a-z]+)/i.exec(event.query.sql)?.[1]?.toLowerCase() ?? '';
  return WORDS[word] ?? 'other';
}

/** Kysely's `log` option for a store of this engine; undefined without a listener (no cost). */
export function queryTiming(engine: Engine, listener: StoreQueryListener | undefined): LogConfig | undefined {
  if (!listener) return undefined;
  return (event: LogEvent) => {
    try {
      listener({
        engine,
        statement: statementKind(event),
        durationMs: event.queryDurationMillis,
        failed: event.level === 'error',
      });
    } catch {
      // A listener's failure is not the statement's.
    }
  };
}

/**
 * A statement as a span of the work that ran it (an interaction, a reminder): its engine and kind,
 * never its text or values. Nothing unless tracing is on.
 */
export function traceStatement(event: StoreQueryEvent): void {
  recordSpan(
    `store ${event.statement}`,
    {
      'db.system.name': event.engine === 'postgres' ? 'postgresql' : 'sqlite',
      'db.operation.name': event.statement,
    },
    { endMs: Date.now(), durationMs: event.durationMs, failed: event.failed },
  );
}

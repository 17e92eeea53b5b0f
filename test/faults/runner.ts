/**
 * The fault suite's runner: one table, one row per fault. A row never throws: it collects what it
 * saw and what did not match, so the summary at the end (`fault suite: N rows, M as expected`)
 * and the table always print, once, after the last row. Rows come in families (one describe block
 * each, one vitest test per row); a family says when its rows run, so that rows that mostly wait
 * run side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_POSTGRES } from '../support/postgres.js';
import { START_BOUND_MS, withTimeout } from '../support/wait.js';
import { closeLeftovers, message } from './helpers.js';

export interface Outcome {
  observed: string;
  problems: string[];
}

export interface Row {
  id: string;
  fault: string;
  expected: string;
  /**
   * The row's own time; it gives up after this plus START_BOUND_MS (the start-up of its bots on a
   * busy machine), less a second.
   */
  timeoutMs: number;
  /** Needs PostgreSQL: skipped, and not run, in a run without it (test/support/postgres.ts). */
  postgres?: boolean;
  run: () => Promise<Outcome>;
}

export interface Family {
  /** The describe block its rows are listed under. */
  title: string;
  rows: readonly Row[];
  /**
   * When its rows run: families of the same numbered stage all at once, stage 1 before stage 2;
   * 'alongside' from the start, beside every stage; 'last' once every other row is done (it may
   * read what they saw).
   */
  stage: number | 'alongside' | 'last';
}

/**
 * vitest's bound for one test: a row bounds itself (its timeoutMs plus START_BOUND_MS), this only
 * catches a hang of the suite.
 */
export const TEST_BOUND_MS = 180_000;
/** Each harness listens for unhandled rejections; up to 16 run at once. */
const MAX_LISTENERS = 40;

interface Result extends Outcome {
  id: string;
  fault: string;
  ms: number;
}

/** A row waiting for its stage: `result` settles once the stage has started and the row has run. */
interface Scheduled {
  row: Row;
  result: Promise<Result>;
  /** Set when the row has run. */
  done: Result | undefined;
  start: () => Promise<Result>;
}

async function execute(row: Row): Promise<Result> {
  const started = performance.now();
  let outcome: Outcome;
  try {
    // The row's own time, and the start-up allowance: up to 16 rows start their bots at once.
    outcome = await withTimeout(row.run(), row.timeoutMs + START_BOUND_MS - 1_000, `row ${row.id}`);
  } catch (err) {
    outcome = { observed: `threw: ${message(err)}`, problems: [`threw: ${message(err)}`] };
  }
  return { id: row.id, fault: row.fault, ms: Math.round(performance.now() - started), ...outcome };
}

function schedule(row: Row): Scheduled {
  let begin: (() => void) | undefined;
  const result = new Promise<Result>((resolve) => {
    begin = () => {
      void execute(row).then((done) => {
        entry.done = done;
        resolve(done);
      });
    };
  });
  const entry: Scheduled = {
    row,
    result,
    done: undefined,
    start: () => {
      begin?.();
      begin = undefined;
      return result;
    },
  };
  return entry;
}

/** Starts every row given at once; resolves when all are done (execute never rejects). */
async function runTogether(rows: readonly Scheduled[]): Promise<void> {
  await Promise.all(rows.map((s) => s.start()));
}

/** One vitest test per row; it waits for the row's stage to run it. */
function tableRow(s: Scheduled): void {
  it(
    `${s.row.id} ${s.row.fault} → ${s.row.expected}`,
    async () => {
      const result = await s.result;
      expect(result.problems, `${s.row.id}: ${result.observed}`).toEqual([]);
    },
    TEST_BOUND_MS,
  );
}

function summary(results: readonly Result[], seconds: number, leftChildren: readonly string[]): string {
  const ok = results.filter((r) => r.problems.length === 0).length;
  const width = Math.max(...results.map((r) => `${r.id} ${r.fault}`.length), 10);
  const table = results.map((r) => {
    const mark = r.problems.length === 0 ? 'ok  ' : 'FAIL';
    const head = `${mark} ${`${r.id} ${r.fault}`.padEnd(width)} ${String(r.ms).padStart(6)} ms │ `;
    const problems = r.problems.length === 0 ? '' : ` ✗ ${r.problems.join(' ✗ ')}`;
    return `${head}${r.observed}${problems}`;
  });
  return [
    `fault suite: ${results.length} rows, ${ok} as expected (${seconds} s)`,
    ...table,
    ...(leftChildren.length > 0 ? [`children killed by afterAll: ${leftChildren.join(', ')}`] : []),
  ].join('\n');
}

/**
 * Declares the suite in the calling test file: a describe block per family, in the order given
 * (the table's order), the rows run by stage, and the summary printed by afterAll.
 */
export function runFaultSuite(families: readonly Family[]): void {
  const suiteStarted = performance.now();
  const runs = (row: Row) => HAS_POSTGRES || row.postgres !== true;
  const scheduled = families.map((family) => ({
    family,
    rows: family.rows.filter(runs).map(schedule),
    skipped: family.rows.filter((row) => !runs(row)),
  }));
  const inStage = (match: (stage: Family['stage']) => boolean): Scheduled[] =>
    scheduled.filter((f) => match(f.family.stage)).flatMap((f) => f.rows);
  const stages = [...new Set(families.map((f) => f.stage).filter((s) => typeof s === 'number'))].sort(
    (a, b) => a - b,
  );
  let previousMaxListeners = 10;

  beforeAll(() => {
    previousMaxListeners = process.getMaxListeners();
    process.setMaxListeners(Math.max(previousMaxListeners, MAX_LISTENERS));
    const alongside = inStage((s) => s === 'alongside');
    void runTogether(alongside);
    void (async () => {
      for (const stage of stages) await runTogether(inStage((s) => s === stage));
      await Promise.all(alongside.map((s) => s.result));
      await runTogether(inStage((s) => s === 'last'));
    })();
  });

  afterAll(async () => {
    process.setMaxListeners(previousMaxListeners);
    const leftChildren = await closeLeftovers();
    // The rows that ran, in table order.
    const results = scheduled.flatMap((f) => f.rows.flatMap((s) => (s.done ? [s.done] : [])));
    const seconds = Math.round((performance.now() - suiteStarted) / 1000);
    console.log(summary(results, seconds, leftChildren));
  });

  for (const { family, rows, skipped } of scheduled) {
    describe(family.title, () => {
      for (const s of rows) tableRow(s);
      for (const row of skipped) it.skip(`${row.id} ${row.fault} → ${row.expected}`, () => undefined);
    });
  }
}

/**
 * `npm run bench`: every scenario against the local stand-ins (127.0.0.1 only), a table on
 * stdout, and the results in bench/results/<date>.json, latest.json and latest.md.
 * BENCH_QUICK=1 runs a reduced version (about a minute) that writes latest-quick.json only.
 * BENCH_ONLY=1,3 runs only the scenarios named (for working on one; never a published result).
 * A scenario too long for the full run's budget (14: the five minutes of a digest boundary; 15: two
 * runs of ten minutes of v3 look-ups; 16: a burst of v3 notifications; 17: a soak of 30 minutes; 18:
 * a million reminders sent at Discord's global limit for 12 minutes or more) runs only when named.
 *
 * Each scenario runs in a process of its own (this script again, with BENCH_SCENARIO set), which
 * hands its rows back in a file and exits: what one scenario leaves behind (its heap and the
 * collector's work on it, timers, connections, a JIT warmed for other code) cannot lengthen the
 * next one's tail. Scenario 2's first-response p99 and scenario 10's added latency both passed
 * alone and missed after the others in one process. Each scenario makes its own store (a fresh
 * SQLite file or PostgreSQL schema) already.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Budget, isQuick, machineFacts, resultsDir } from './lib/env.js';
import { markdownTable, notes, type Row, type ScenarioResult, textTable } from './lib/report.js';
import { autocompleteScenario } from './scenarios/autocomplete.js';
import { chartsScenario } from './scenarios/charts.js';
import { clientOverheadScenario } from './scenarios/client-overhead.js';
import { digestsScenario } from './scenarios/digests.js';
import { followupsScenario } from './scenarios/followups.js';
import { hostsScenario } from './scenarios/hosts.js';
import { memoryScenario } from './scenarios/memory.js';
import { notificationsScenario } from './scenarios/notifications.js';
import { rateLimitScenario } from './scenarios/rate-limit.js';
import { readyScenario } from './scenarios/ready.js';
import { remindersScenario } from './scenarios/reminders.js';
import { remindersAtLimitScenario } from './scenarios/reminders-at-limit.js';
import { restartScenario } from './scenarios/restart.js';
import { sharedLimitsScenario } from './scenarios/shared-limits.js';
import { soakScenario } from './scenarios/soak.js';
import { upEndToEndScenario } from './scenarios/up-e2e.js';
import { v3LookupsScenario } from './scenarios/v3-lookups.js';
import { webhooksScenario } from './scenarios/webhooks.js';

/** The whole run must stay under 10 minutes; the memory scenario drops its largest size to fit. */
const FULL_BUDGET_MS = 9 * 60_000;
const QUICK_BUDGET_MS = 75_000;
/** Kept for scenarios 5 and 6 when scenario 4 decides whether its largest size fits. */
const LATER_RESERVE_MS = 75_000 + 150_000;

interface Scenario {
  id: number;
  name: string;
  run: (budget: Budget) => Promise<ScenarioResult>;
  /** Longer than the full run's budget can hold after the others: run only when BENCH_ONLY names it. */
  namedOnly?: boolean;
}

const SCENARIOS: Scenario[] = [
  { id: 1, name: '1. Directory client overhead', run: () => clientOverheadScenario() },
  { id: 2, name: '2. /up end to end', run: () => upEndToEndScenario() },
  { id: 3, name: '3. Rate-limit ceiling', run: () => rateLimitScenario() },
  {
    id: 4,
    name: '4. Memory after ready',
    run: (budget) => memoryScenario(budget, isQuick() ? 25_000 : LATER_RESERVE_MS),
  },
  { id: 5, name: '5. Time to ready', run: (budget) => readyScenario(budget) },
  { id: 6, name: '6. Reminders at scale', run: () => remindersScenario() },
  { id: 7, name: '7. Shared rate limits', run: () => sharedLimitsScenario() },
  { id: 8, name: '8. Charts', run: () => chartsScenario() },
  { id: 9, name: '9. Webhook receiver', run: () => webhooksScenario() },
  { id: 10, name: '10. Three hosts', run: () => hostsScenario() },
  { id: 11, name: '11. Autocomplete', run: () => autocompleteScenario() },
  { id: 12, name: '12. Restart', run: () => restartScenario() },
  { id: 13, name: '13. Reminder follow-through', run: () => followupsScenario() },
  // The spread of a boundary alone is 5 minutes: only when named (BENCH_ONLY=14).
  { id: 14, name: '14. Digests at a boundary', run: (budget) => digestsScenario(budget), namedOnly: true },
  // Two runs of 10 minutes of arrivals each (cache off, then on): only when named (BENCH_ONLY=15).
  { id: 15, name: '15. v3 look-ups, three hosts', run: () => v3LookupsScenario(), namedOnly: true },
  // A burst of 10,000 v3 notifications, about a minute with its 10,000 servers: only when named (BENCH_ONLY=16).
  { id: 16, name: '16. v3 notifications burst', run: () => notificationsScenario(), namedOnly: true },
  // 30 minutes of steady mixed load (SOAK_MINUTES): only when named (BENCH_ONLY=17).
  { id: 17, name: '17. Soak', run: () => soakScenario(), namedOnly: true },
  // 1,000,000 reminders, 12 minutes sent at Discord's limit and the drain, on both engines: only when named (BENCH_ONLY=18).
  { id: 18, name: '18. Reminders at the limit', run: () => remindersAtLimitScenario(), namedOnly: true },
];

function selected(): Scenario[] {
  const only = process.env.BENCH_ONLY;
  if (!only) return SCENARIOS.filter((s) => !s.namedOnly);
  const ids = new Set(only.split(',').map((s) => Number(s.trim())));
  return SCENARIOS.filter((s) => ids.has(s.id));
}

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** What a scenario's process hands back. */
type Outcome = ({ result: ScenarioResult } | { error: string }) & { unhandled: string[] };

/** Runs `scenario` in a fresh process of this script, with what is left of the budget. */
function inItsOwnProcess(scenario: Scenario, budgetMs: number): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-scenario-'));
  const file = join(dir, 'result.json');
  return new Promise<Outcome>((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string], {
      env: {
        ...process.env,
        BENCH_SCENARIO: String(scenario.id),
        BENCH_BUDGET_MS: String(Math.max(0, Math.round(budgetMs))),
        BENCH_RESULT_FILE: file,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', (err) => resolve({ error: `could not start: ${err.message}`, unhandled: [] }));
    child.once('exit', (code, signal) => {
      try {
        resolve(JSON.parse(readFileSync(file, 'utf8')) as Outcome);
      } catch {
        resolve({ error: `its process ended (${signal ?? `exit ${code}`}) without a result`, unhandled: [] });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** The process of one scenario (BENCH_SCENARIO): runs it and writes its outcome to BENCH_RESULT_FILE. */
async function runOne(id: number, budgetMs: number, file: string): Promise<void> {
  const unhandled: string[] = [];
  process.on('unhandledRejection', (reason) => {
    unhandled.push(reason instanceof Error ? (reason.stack ?? reason.message) : String(reason));
  });
  const scenario = SCENARIOS.find((s) => s.id === id);
  let outcome: Outcome;
  try {
    if (!scenario) throw new Error(`no scenario ${id}`);
    outcome = { result: await scenario.run(new Budget(budgetMs)), unhandled };
  } catch (err) {
    outcome = { error: err instanceof Error ? (err.stack ?? err.message) : String(err), unhandled };
  }
  writeFileSync(file, JSON.stringify(outcome));
}

async function main(): Promise<void> {
  const quick = isQuick();
  const budget = new Budget(quick ? QUICK_BUDGET_MS : FULL_BUDGET_MS);
  const machine = machineFacts();
  const unhandled: string[] = [];
  process.on('unhandledRejection', (reason) => {
    unhandled.push(reason instanceof Error ? (reason.stack ?? reason.message) : String(reason));
  });
  log(
    `${quick ? 'quick' : 'full'} run on ${machine.cpuModel} (${machine.cores} cores), node ${machine.node}`,
  );

  const rows: Row[] = [];
  const data: Record<string, unknown> = {};
  const timings: Record<string, number> = {};
  for (const scenario of selected()) {
    log(`${scenario.name} ...`);
    const started = performance.now();
    const outcome = await inItsOwnProcess(scenario, budget.remainingMs());
    if ('error' in outcome) {
      log(`${scenario.name} failed: ${outcome.error}`);
      rows.push({
        scenario: scenario.name,
        metric: 'scenario failed',
        unit: '',
        ours: undefined,
        verdict: 'error',
        note: outcome.error.split('\n')[0] ?? outcome.error,
      });
      data[scenario.name] = { error: outcome.error };
    } else {
      rows.push(...outcome.result.rows);
      data[scenario.name] = outcome.result.data;
    }
    unhandled.push(...outcome.unhandled);
    const tookMs = Math.round(performance.now() - started);
    timings[scenario.name] = tookMs;
    log(`${scenario.name} done in ${(tookMs / 1000).toFixed(1)} s`);
  }
  const totalMs = budget.elapsedMs();
  const finishedAt = new Date().toISOString();

  const facts = [
    `date ${machine.date}`,
    `commit ${machine.commit}`,
    `cpu ${machine.cpuModel} × ${machine.cores} cores`,
    `node ${machine.node}`,
    `discord.js ${machine.discordJs}`,
    `undici ${machine.undici}`,
    `${machine.platform} ${machine.arch}`,
    `run ${(totalMs / 1000).toFixed(0)} s${quick ? ' (BENCH_QUICK)' : ''}`,
  ].join(', ');
  const failed = rows.filter((r) => r.verdict === 'FAIL' || r.verdict === 'error');
  const rowNotes = notes(rows);
  const text = [
    '',
    textTable(rows),
    '',
    facts,
    ...(rowNotes.length > 0 ? ['', 'Notes:', ...rowNotes.map((n) => `  - ${n}`)] : []),
    ...(unhandled.length > 0 ? ['', `Unhandled rejections: ${unhandled.length}`] : []),
    '',
    failed.length === 0 ? 'Every target met.' : `Missed or failed: ${failed.length} row(s).`,
    '',
  ].join('\n');
  process.stdout.write(text);

  const dir = resultsDir();
  mkdirSync(dir, { recursive: true });
  const stamp = finishedAt.replace(/:/g, '-');
  const json = `${JSON.stringify(
    {
      quick,
      startedAt: machine.date,
      finishedAt,
      totalMs: Math.round(totalMs),
      machine,
      timings,
      rows,
      data,
      unhandled,
    },
    null,
    2,
  )}\n`;
  const only = process.env.BENCH_ONLY ? '-partial' : '';
  const suffix = quick ? `-quick${only}` : only;
  writeFileSync(join(dir, `${stamp}${suffix}.json`), json);
  writeFileSync(join(dir, `latest${suffix}.json`), json);
  if (!quick && !only) {
    const markdown = [
      `<!-- npm run bench, ${finishedAt} -->`,
      '',
      markdownTable(rows),
      '',
      `_${facts}_`,
      ...(rowNotes.length > 0 ? ['', ...rowNotes.map((n) => `- ${n}`)] : []),
      '',
    ].join('\n');
    writeFileSync(join(dir, 'latest.md'), markdown);
  }
  log(`results written to ${join(dir, `latest${suffix}.json`)}`);
}

const one = process.env.BENCH_SCENARIO;
(one === undefined
  ? main()
  : runOne(Number(one), Number(process.env.BENCH_BUDGET_MS), process.env.BENCH_RESULT_FILE as string)
).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);

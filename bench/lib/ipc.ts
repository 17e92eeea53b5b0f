/**
 * Calls over a forked child's IPC channel: the bench runs the Discord stand-in and the directory
 * emulator in processes of their own (bench/workers/) and drives them with these, so that the
 * process it measures holds the bot alone, as in production.
 */
import { fork } from 'node:child_process';
import { START_BOUND_MS } from '../../test/support/wait.js';
import { stopChild } from './children.js';
import { compiled } from './env.js';

interface Call {
  id: number;
  method: string;
  args: unknown[];
}

type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** What a worker sends once its handlers are in place. */
const READY = 'rpc-ready';

export interface RpcChild {
  readonly pid: number;
  call<T>(method: string, ...args: unknown[]): Promise<T>;
  /** Ends the child (SIGTERM, then SIGKILL after 5 s) and rejects the calls still waiting. */
  stop(): Promise<void>;
}

/** Forks a compiled worker (e.g. 'bench/workers/discord-stand-in.js') and waits until it serves calls. */
export async function forkRpc(worker: string, timeoutMs = START_BOUND_MS): Promise<RpcChild> {
  // No execArgv from the parent: a profiled or inspected bench must not profile its stand-ins too.
  const child = fork(compiled(worker), [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  let nextId = 1;
  const failAll = (why: string): void => {
    for (const { reject } of waiting.values()) reject(new Error(`${worker}: ${why}`));
    waiting.clear();
  };
  child.on('message', (message: unknown) => {
    const answer = message as Answer;
    const entry = waiting.get(answer.id);
    if (!entry) return;
    waiting.delete(answer.id);
    if (answer.ok) entry.resolve(answer.value);
    else entry.reject(new Error(`${worker}: ${answer.error}`));
  });
  child.once('exit', (code, signal) => failAll(`exited (${code ?? signal}): ${stderr.trim()}`));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${worker} did not start in ${timeoutMs} ms: ${stderr.trim()}`));
    }, timeoutMs);
    const onReady = (message: unknown): void => {
      if (message !== READY) return;
      clearTimeout(timer);
      child.off('message', onReady);
      resolve();
    };
    child.on('message', onReady);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${worker} exited (${code ?? signal}) before it started: ${stderr.trim()}`));
    });
  });

  return {
    pid: child.pid ?? -1,
    call<T>(method: string, ...args: unknown[]): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, method, args } satisfies Call, (err) => {
          if (!err) return;
          waiting.delete(id);
          reject(err);
        });
      });
    },
    stop: () => stopChild(child),
  };
}

/** In a worker: answers calls with these handlers, then tells the parent it is ready. */
export function serveRpc(handlers: Record<string, (...args: never[]) => unknown>): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('not started by forkRpc (no IPC channel)');
  process.on('message', (message: unknown) => {
    const { id, method, args } = message as Call;
    const handler = handlers[method] as ((...args: unknown[]) => unknown) | undefined;
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`no method ${method}`);
        return handler(...args);
      })
      .then(
        (value) => send({ id, ok: true, value } satisfies Answer),
        (err: unknown) =>
          send({
            id,
            ok: false,
            error: err instanceof Error ? (err.stack ?? err.message) : String(err),
          } satisfies Answer),
      );
  });
  // The parent gone (crashed, killed): nothing left to serve.
  process.once('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
  send(READY);
}

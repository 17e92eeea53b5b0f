/**
 * Helpers of the fault suite: a checker that collects problems instead of throwing at the first
 * one (so every row of the table says what it saw), the clean-up of what a failed row left
 * running, the built bot as a child process, and a holding HTTP proxy that can keep a request from
 * ever reaching the server behind it (to kill the bot while a request is "on the wire").
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BotProcess } from '../support/bot-process.js';
import { assertLocal, LOCALHOST } from '../support/local.js';

// ---- checks -------------------------------------------------------------------------------------

/** Collects what a row saw and what did not match its expectation. */
export class Checks {
  readonly problems: string[] = [];
  readonly notes: string[] = [];

  that(ok: boolean, problem: string): boolean {
    if (!ok) this.problems.push(problem);
    return ok;
  }

  equal(actual: unknown, expected: unknown, what: string): boolean {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    return this.that(a === e, `${what}: expected ${e}, got ${a}`);
  }

  none(list: readonly string[], what: string): boolean {
    return this.that(list.length === 0, `${what}: ${list.slice(0, 3).join(' | ')}`);
  }

  note(text: string): void {
    this.notes.push(text);
  }
}

/** A line of a stack trace, as Node prints one on stderr. */
export const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- what a row leaves running --------------------------------------------------------------------

/** Servers and harnesses a row has not closed yet. */
const open = new Set<() => Promise<void>>();
/** Every bot process a row started. */
const children = new Set<BotProcess>();

/** Registers `close` for the suite's end; returns it, made idempotent, for the row to call. */
export function track(close: () => Promise<void>): () => Promise<void> {
  let done = false;
  const once = async (): Promise<void> => {
    if (done) return;
    done = true;
    open.delete(once);
    await close();
  };
  open.add(once);
  return once;
}

/** `node dist/src/app/main.js` as a child, named for the row's messages; stopped at the end if need be. */
export function startBot(name: string, env: Record<string, string>): BotProcess {
  const child = new BotProcess('main.js', env, name);
  children.add(child);
  return child;
}

/**
 * Stops every child and closes everything a row left open (the suite's afterAll); returns the
 * names of the children that were still running.
 */
export async function closeLeftovers(): Promise<string[]> {
  const running = [...children].filter((c) => !c.exit).map((c) => c.name);
  await Promise.all([...children].map((c) => c.stop(500)));
  children.clear();
  for (const close of [...open]) await close().catch(() => undefined);
  return running;
}

// ---- a holding proxy ----------------------------------------------------------------------------

export interface HeldRequest {
  method: string;
  url: string;
  body: string;
  /** The client went away while it was held. */
  closed: boolean;
}

export interface HoldingProxy {
  /** 'http://127.0.0.1:PORT' (append the target's own path prefix, e.g. '/api'). */
  url: string;
  /** Requests that matched `hold` while it was set: never forwarded. */
  held: HeldRequest[];
  /** Requests forwarded, as 'METHOD url'. */
  forwarded: string[];
  /** Which requests to keep (never answered, never forwarded); undefined: forward everything. */
  hold: ((method: string, url: string) => boolean) | undefined;
  close(): Promise<void>;
}

/**
 * An HTTP proxy on 127.0.0.1 in front of `target` (an origin on 127.0.0.1). A request the `hold`
 * predicate matches is read whole and then kept open, unanswered and unforwarded, until the
 * client goes away: the server behind never sees it.
 */
export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  assertLocal(target, "the proxy's target");
  const origin = new URL(target);
  const open = new Set<IncomingMessage>();

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const headers = { ...req.headers, host: origin.host };
    const out = request(
      {
        host: LOCALHOST,
        port: origin.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('proxy: upstream error');
    });
    out.end(body);
  };

  const proxy: HoldingProxy = {
    url: '',
    held: [],
    forwarded: [],
    hold: undefined,
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      if (proxy.hold?.(method, url)) {
        const held: HeldRequest = { method, url, body: body.toString('utf8'), closed: false };
        proxy.held.push(held);
        open.add(req);
        res.on('close', () => {
          held.closed = true;
          open.delete(req);
        });
        return;
      }
      proxy.forwarded.push(`${method} ${url}`);
      forward(req, res, body);
    });
  });
  await new Promise<void>((done) => server.listen(0, LOCALHOST, done));
  const { port } = server.address() as AddressInfo;
  proxy.url = `http://${LOCALHOST}:${port}`;
  let closing: Promise<void> | undefined;
  proxy.close = () => {
    closing ??= new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    return closing;
  };
  return proxy;
}

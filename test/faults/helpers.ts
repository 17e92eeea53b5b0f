/**
 * Helpers of the fault suite: a checker that collects problems instead of throwing at the first
 * one (so every row of the table says what it saw), bounded waits, the built bot as a child
 * process with its output captured, and a holding HTTP proxy that can keep a request from ever
 * reaching the server behind it (to kill the bot while a request is "on the wire").
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Exit, NodeChild } from '../support/child.js';
import type { LogEntry } from '../support/logs.js';
import { seededRandom } from '../support/random.js';
import { sleep, withTimeout } from '../support/wait.js';

export { sleep, withTimeout };
export const LOCALHOST = '127.0.0.1';
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
export const MAIN_JS = join(ROOT, 'dist/src/app/main.js');

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

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- waiting ------------------------------------------------------------------------------------

/** Polls until `probe` returns something other than undefined; throws after `timeoutMs`. */
export async function until<T>(
  probe: () => T | undefined,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (performance.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---- secrets ------------------------------------------------------------------------------------

/** Where any secret (8 characters or more) occurs in the texts: `where: excerpt` per hit. */
export function leaksIn(
  texts: ReadonlyArray<{ where: string; text: string }>,
  secrets: Iterable<string>,
): string[] {
  const list = [...secrets].filter((s) => s.length >= 8);
  const out: string[] = [];
  for (const { where, text } of texts) {
    for (const s of list) if (text.includes(s)) out.push(`${where}: ${text.slice(0, 120)}`);
  }
  return out;
}

// ---- the built bot as a child process -----------------------------------------------------------

export type { CapturedLine, Exit } from '../support/child.js';

/** Every child started here, so afterAll can kill what a failed row left behind. */
export const children = new Set<BotChild>();

/** `node dist/src/app/main.js` as a child (see NodeChild), named for the row's messages. */
export class BotChild extends NodeChild {
  constructor(name: string, env: Record<string, string>) {
    super(name, MAIN_JS, env);
    children.add(this);
  }

  /** Waits for the 'connected to Discord' line (the gateway is ready). */
  ready(timeoutMs = 10_000): Promise<LogEntry> {
    return this.waitForEntry((e) => e.msg === 'connected to Discord', timeoutMs, 'connected to Discord');
  }

  /** SIGTERM, then SIGKILL after `graceMs`; always resolves with the exit. Removes the cwd. */
  async stop(graceMs = 5_000): Promise<Exit> {
    if (!this.exit) {
      this.kill('SIGTERM');
      const done = await withTimeout(this.exited, graceMs, `${this.name} to exit`).catch(() => undefined);
      if (!done) {
        this.kill('SIGKILL');
        await withTimeout(this.exited, 3_000, `${this.name} to die`).catch(() => undefined);
      }
    }
    children.delete(this);
    this.removeCwd();
    return this.exit ?? { code: null, signal: null, at: performance.now() };
  }
}

/** Kills every child still running (afterAll); returns the names of those that were. */
export async function killAllChildren(): Promise<string[]> {
  const running = [...children].filter((c) => !c.exit).map((c) => c.name);
  await Promise.all([...children].map((c) => c.stop(500)));
  return running;
}

/** The journal file of a data directory, parsed ([] when missing or unreadable). */
export function journalEntries(dataDir: string): Array<Record<string, unknown>> {
  try {
    const value: unknown = JSON.parse(readFileSync(join(dataDir, 'pending-ups.json'), 'utf8'));
    return Array.isArray(value) ? (value as Array<Record<string, unknown>>) : [];
  } catch {
    return [];
  }
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
  const origin = new URL(target);
  if (origin.hostname !== LOCALHOST) throw new Error(`the proxy only forwards to ${LOCALHOST}`);
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

// ---- hostile inputs -----------------------------------------------------------------------------

const SNOWFLAKE_LIKE = '123456789012345678';
const PIECES: readonly string[] = [
  // other routes, by traversal and by encoding
  '../links/get',
  '..%2Flinks%2Fget',
  '..%2F..%2Fprofile',
  '%2F',
  '%2e%2e%2f',
  '..',
  '.',
  '/',
  '\\..\\links',
  'kerdoku/../../links/get',
  'kerdoku/comments',
  '/v2/links/get',
  '%00',
  '\u0000',
  // query and fragment
  '?',
  '#',
  '&',
  '?x=1&y=2',
  'kerdoku?with=1',
  'kerdoku#top',
  '%3F',
  '%23',
  ';',
  // unicode
  '\u202E',
  '\u200B',
  '\u200D',
  '\uFEFF',
  '\u2066',
  '🤖',
  '👨‍👩‍👧',
  'e\u0301',
  'Z̷̢͓a̵l̴g̶o̷',
  '７２４６６３３６０９３４７７２７９７',
  '٧٢٤٦٦٣٣٦٠٩٣٤٧٧٢٧٩٧',
  'кердоку',
  // mentions
  '@everyone',
  '@here',
  `<@&${SNOWFLAKE_LIKE}>`,
  `<@${SNOWFLAKE_LIKE}>`,
  `<@!${SNOWFLAKE_LIKE}>`,
  `<#${SNOWFLAKE_LIKE}>`,
  '<@&724663360934772797>',
  // markdown
  '**bold**',
  '`code`',
  '```js\nx\n```',
  '[click](https://evil.example/)',
  '||spoiler||',
  '> quote',
  '# heading',
  '~~strike~~',
  '__under__',
  // other hosts and schemes
  'https://evil.example/bot/kerdoku',
  'https://evil.example/server/722424773233213460',
  'http://127.0.0.1:1/bot/724663360934772797',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'ftp://evil.example/bot/kerdoku',
  'data:text/html,<script>alert(1)</script>',
  '//evil.example/bot/kerdoku',
  'https://user:pass@evil.example/bot/kerdoku',
  'https://boticord.top/bot/../links/get',
  'https://boticord.top/bot/%2e%2e',
  'https://boticord.top/bot/..%2Flinks',
  'https://boticord.top/bot/kerdoku?x=../links',
  'https://boticord.top/b/kerdoku#../links',
  'https://boticord.top/s/kerdoku/extra',
  // plausible references
  'kerdoku',
  '724663360934772797',
  '722424773233213460',
  'boticord',
  'a',
  '_-_',
  ' ',
  '\t',
  '\n',
];

function randomShortCode(rand: () => number, length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(rand() * alphabet.length)];
  return out;
}

function randomDigits(rand: () => number, length: number): string {
  let out = String(1 + Math.floor(rand() * 9));
  while (out.length < length) out += String(Math.floor(rand() * 10));
  return out;
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

/** Percent-encodes some characters of a string at random (upper or lower case hex). */
function sprinkleEncoding(rand: () => number, text: string): string {
  return [...text]
    .map((ch) => {
      if (rand() > 0.3) return ch;
      const hex = [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      return rand() < 0.5 ? hex : hex.toUpperCase();
    })
    .join('');
}

/** One hostile string: a piece, a few pieces glued, a long one, a near-reference, or an encoded one. */
function hostile(rand: () => number, i: number): string {
  switch (i % 8) {
    case 0:
      return pick(rand, PIECES);
    case 1: {
      const n = 2 + Math.floor(rand() * 3);
      const parts = Array.from({ length: n }, () => pick(rand, PIECES));
      return parts.join(pick(rand, ['', '/', ' ', '%2F', '?', '#', '\u200B']));
    }
    case 2: {
      const unit = pick(rand, ['a', '7', '../', '%2F', '\u202E', '🤖', '@everyone ', 'é']);
      const length = pick(rand, [201, 513, 2_000, 6_001, 10_000]);
      return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
    }
    case 3:
      // A short code of the wrong length (33) or one that fits, with something after it.
      return rand() < 0.5
        ? randomShortCode(rand, 33)
        : `${randomShortCode(rand, 1 + Math.floor(rand() * 32))}${pick(rand, PIECES)}`;
    case 4:
      // Digits of a wrong length, or a snowflake wrapped in something.
      return rand() < 0.5
        ? randomDigits(rand, pick(rand, [1, 16, 21, 40]))
        : `${pick(rand, ['<@', '<@&', '<#', '@', '#', ''])}${randomDigits(rand, 18)}` +
            pick(rand, ['>', '/', '?', '']);
    case 5:
      return sprinkleEncoding(rand, pick(rand, PIECES));
    case 6: {
      const section = pick(rand, ['bot', 'b', 'server', 's', 'BOT', 'links', 'profile']);
      const host = pick(rand, ['boticord.top', 'evil.example', '127.0.0.1:9', 'xn--80ak6aa92e.com']);
      const ref = rand() < 0.5 ? randomShortCode(rand, 8) : pick(rand, PIECES);
      return `${pick(rand, ['https', 'http', 'HTTPS', 'ws', 'mailto'])}://${host}/${section}/${ref}`;
    }
    default:
      // Valid-looking references: they go to the directory (and mostly are not there).
      return rand() < 0.5 ? randomShortCode(rand, 1 + Math.floor(rand() * 32)) : randomDigits(rand, 18);
  }
}

/** `count` hostile strings from `seed`, always the same ones. */
export function hostileInputs(seed: number, count: number): string[] {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => hostile(rand, i));
}

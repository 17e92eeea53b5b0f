/**
 * D rows: directory faults seen through the bot, each with the private answer and the one log
 * line expected of it.
 */
import type { Environment } from '../../../src/config/env.js';
import type { SendCommandOptions } from '../../discord/index.js';
import {
  type Answer,
  type Harness,
  isEphemeral,
  LEVEL,
  liveMessages,
  optionString,
} from '../../e2e/harness.js';
import { type FaultRule, IDS, type RecordedRequest } from '../../emulator/index.js';
import { closedPortUrl } from '../../support/local.js';
import { bumpsOf, EN, firstEmbed, freshGuild, inHarness, newUserRef, RU } from '../fixtures.js';
import type { Checks } from '../helpers.js';
import type { Family, Row } from '../runner.js';

type Level = 'info' | 'warn' | 'error';

interface DirectoryCase {
  id: string;
  fault: string;
  /** Overrides of the bot's environment (a function when they must be made first). */
  env?: Environment | (() => Promise<Environment>);
  faults?: FaultRule[];
  command: 'bot' | 'server' | 'up';
  locale: 'en-US' | 'ru';
  code: string;
  level: Level;
  /** The answer's description (title too for /up), in the case's locale. */
  text: string | RegExp;
  /** More checks on what the emulator saw. */
  extra?: (h: Harness, answer: Answer, c: Checks, bumpsBefore: number) => string;
}

function commandFor(kind: DirectoryCase['command']): Pick<SendCommandOptions, 'name' | 'options'> {
  if (kind === 'bot') return { name: 'bot', options: [optionString('ref', 'kerdoku')] };
  if (kind === 'server') return { name: 'server', options: [optionString('ref', IDS.serverFresh)] };
  return { name: 'up' };
}

function directoryRow(spec: DirectoryCase): Row {
  const t = spec.locale === 'ru' ? RU : EN;
  const shown = typeof spec.text === 'string' ? spec.text : spec.text.source;
  return {
    id: spec.id,
    fault: spec.fault,
    expected: `private "${shown.slice(0, 40)}…", one ${spec.level} line`,
    timeoutMs: 25_000,
    run: async () =>
      inHarness(
        { env: typeof spec.env === 'function' ? await spec.env() : (spec.env ?? {}) },
        async (h, c) => {
          for (const rule of spec.faults ?? []) h.emu.faults.add(rule);
          const bumpsBefore = bumpsOf(h.emu, IDS.serverFresh);
          const answer = await h.run(
            {
              guildId: freshGuild.id,
              locale: spec.locale,
              user: newUserRef('dir'),
              ...commandFor(spec.command),
            },
            15_000,
          );
          const first = await answer.handle.firstResponse(1_000);
          const deferMs = Math.round(first.at - answer.handle.sentAt);
          c.that(first.type === 5, `first response type ${first.type}, not a deferral`);
          c.that(deferMs < 3_000, `deferred after ${deferMs} ms (Discord allows 3 s)`);
          c.equal(answer.outcome, `error:${spec.code}`, 'outcome');
          // Private: the public placeholder deleted, one ephemeral follow-up left.
          const live = liveMessages(answer.view);
          c.that(answer.view.original?.deleted === true, 'the public placeholder was not deleted');
          c.that(
            live.length === 1 && live.every(isEphemeral),
            `left ${live.length} message(s), not 1 private`,
          );
          const embed = firstEmbed(live[0]);
          const description = embed?.description ?? '';
          if (typeof spec.text === 'string') c.equal(description, spec.text, 'answer');
          else c.that(spec.text.test(description), `answer ${JSON.stringify(description)} !~ ${spec.text}`);
          if (spec.command === 'up') c.equal(embed?.title, `❌ ${t('up.title.error')}`, 'title');
          // One log line at the level of the error; nothing louder anywhere.
          const failures = h.entries().filter((e) => e.msg === 'command failed');
          c.equal(
            failures.map((e) => [e.level, e.code, e.userId]),
            [[LEVEL[spec.level], spec.code, answer.line.userId]],
            '"command failed" lines',
          );
          const loud = h.entries().filter((e) => e.level >= LEVEL.warn);
          c.equal(
            loud.map((e) => e.msg),
            spec.level === 'info' ? [] : ['command failed'],
            'lines at warn or above',
          );
          const more = spec.extra?.(h, answer, c, bumpsBefore);
          const total = Math.round((answer.line.durationMs as number | undefined) ?? 0);
          return (
            `${answer.outcome}, private ${JSON.stringify(description.slice(0, 48))}, ` +
            `${spec.level} ×1, deferral ${deferMs} ms, answer ${total} ms${more ? `, ${more}` : ''}`
          );
        },
      ),
  };
}

function directoryRequests(h: Harness, method: string, path: RegExp): RecordedRequest[] {
  return h.emu.requests.filter((r) => r.method === method && path.test(r.path));
}

/** How many times the bot asked the directory for a bot. */
const botAttempts = (h: Harness): string => `${directoryRequests(h, 'GET', /^\/v2\/bot\//).length} attempts`;

/** /bot when the directory cannot be reached or read: private "not answering", one warn line. */
const BOT_UNAVAILABLE = {
  command: 'bot',
  locale: 'en-US',
  code: 'Unavailable',
  level: 'warn',
  text: `❌ ${EN('errors.unavailable')}`,
} as const;

const DIRECTORY_CASES: DirectoryCase[] = [
  {
    id: 'D1',
    fault: 'directory: connection refused (/bot)',
    env: async () => ({ DIRECTORY_API_URL: await closedPortUrl() }),
    ...BOT_UNAVAILABLE,
    extra: (h, _a, c) => {
      c.equal(h.emu.requests.length, 0, 'requests reaching the emulator');
      return 'nothing reached the emulator';
    },
  },
  {
    id: 'D2',
    fault: 'directory: 5 s stall, timeout 1 s (/bot)',
    env: { DIRECTORY_TIMEOUT_MS: '1000' },
    faults: [{ kind: 'stall', ms: 5_000, path: /^\/bot\// }],
    ...BOT_UNAVAILABLE,
    extra: botAttempts,
  },
  {
    id: 'D3',
    fault: 'directory: 500 JSON (/up, ru)',
    faults: [{ kind: 'status', status: 500, method: 'POST', path: /^\/server$/, message: 'Internal error' }],
    command: 'up',
    locale: 'ru',
    code: 'Unavailable',
    level: 'warn',
    text: RU('errors.unavailable'),
    extra: (h, _a, c, before) => {
      const posts = directoryRequests(h, 'POST', /^\/v2\/server$/).length;
      c.equal(posts, 1, 'POST /server attempts (a 500 may have acted: not repeated)');
      c.equal(bumpsOf(h.emu, IDS.serverFresh), before, 'bumps');
      return `${posts} POST, bumps unchanged`;
    },
  },
  {
    id: 'D4',
    fault: 'directory: 502 HTML page (/bot)',
    faults: [{ kind: 'html', status: 502, path: /^\/bot\// }],
    ...BOT_UNAVAILABLE,
    extra: botAttempts,
  },
  {
    id: 'D5',
    fault: 'directory: invalid JSON (/bot, ru)',
    faults: [{ kind: 'invalid-json', path: /^\/bot\// }],
    command: 'bot',
    locale: 'ru',
    code: 'InvalidResponse',
    level: 'error',
    text: `❌ ${RU('errors.invalidResponse')}`,
  },
  {
    id: 'D6',
    fault: 'directory: schema drift (/server)',
    faults: [{ kind: 'drift', path: /^\/server\// }],
    command: 'server',
    locale: 'en-US',
    code: 'InvalidResponse',
    level: 'error',
    text: `❌ ${EN('errors.invalidResponse')}`,
  },
  {
    id: 'D7',
    fault: 'directory: 429 Retry-After 1 s (/bot)',
    faults: [{ kind: 'rate-limit', retryAfterMs: 1_000, path: /^\/bot\// }],
    command: 'bot',
    locale: 'en-US',
    code: 'RateLimited',
    level: 'info',
    text: /^❌ The directory is busy\. Try again <t:\d+:R>\.$/,
    extra: botAttempts,
  },
  {
    id: 'D8',
    fault: 'directory: 429 without Retry-After (/up)',
    faults: [{ kind: 'rate-limit', method: 'POST', path: /^\/server$/ }],
    command: 'up',
    locale: 'en-US',
    code: 'RateLimited',
    level: 'info',
    text: EN('errors.rateLimitedNoWait'),
    extra: (h, _a, c, before) => {
      c.equal(bumpsOf(h.emu, IDS.serverFresh), before, 'bumps');
      return `${directoryRequests(h, 'POST', /^\/v2\/server$/).length} POST attempts, bumps unchanged`;
    },
  },
];

export const directoryFaults: Family = {
  title: 'directory faults through the bot',
  stage: 1,
  rows: DIRECTORY_CASES.map(directoryRow),
};

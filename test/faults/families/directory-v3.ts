/**
 * V rows: directory faults on API v3 seen through the bot (DIRECTORY_API_VERSION=v3, a v3 key),
 * each with the private answer and the one log line expected of it. The client-level v3 table
 * (codes, the limiter, the search service, hostile records) is test/contract/faults-v3.test.ts
 * and hostile-v3.test.ts.
 */
import type { Harness } from '../../e2e/harness.js';
import { isEphemeral, LEVEL, liveMessages, optionString } from '../../e2e/harness.js';
import { type FaultRule, IDS, V3_KEYS } from '../../emulator/index.js';
import { EN, firstEmbed, freshGuild, inHarness, newUserRef } from '../fixtures.js';
import type { Family, Row } from '../runner.js';

/** The bot on v3: the key bare, no v1/v2-only settings. */
const V3_ENV = {
  DIRECTORY_API_VERSION: 'v3',
  DIRECTORY_TOKEN: V3_KEYS.kerdoku,
  DIRECTORY_TOKEN_KIND: undefined,
  DIRECTORY_ROUTE_RATE_LIMIT: undefined,
};

interface V3Case {
  id: string;
  fault: string;
  faults: FaultRule[];
  env?: Record<string, string>;
  code: string;
  level: 'info' | 'warn' | 'error';
  text: string | RegExp;
  /** How many GET /v3/bots/:id the bot is expected to send. */
  attempts: number;
}

const botGets = (h: Harness): number =>
  h.emu.requests.filter((r) => r.method === 'GET' && /^\/v3\/bots\/\d+$/.test(r.path)).length;

function v3Row(spec: V3Case): Row {
  const shown = typeof spec.text === 'string' ? spec.text : spec.text.source;
  return {
    id: spec.id,
    fault: spec.fault,
    expected: `private "${shown.slice(0, 40)}…", one ${spec.level} line, ${spec.attempts} attempt(s)`,
    timeoutMs: 25_000,
    run: () =>
      inHarness({ env: { ...V3_ENV, ...spec.env } }, async (h, c) => {
        for (const rule of spec.faults) h.emu.faults.add(rule);
        const answer = await h.run(
          {
            guildId: freshGuild.id,
            locale: 'en-US',
            user: newUserRef('v3'),
            name: 'bot',
            options: [optionString('ref', IDS.plainBot)],
          },
          15_000,
        );
        c.equal(answer.outcome, `error:${spec.code}`, 'outcome');
        const live = liveMessages(answer.view);
        c.that(live.length === 1 && live.every(isEphemeral), `left ${live.length} message(s), not 1 private`);
        const description = firstEmbed(live[0])?.description ?? '';
        if (typeof spec.text === 'string') c.equal(description, spec.text, 'answer');
        else c.that(spec.text.test(description), `answer ${JSON.stringify(description)} !~ ${spec.text}`);
        const failures = h.entries().filter((e) => e.msg === 'command failed');
        c.equal(
          failures.map((e) => [e.level, e.code]),
          [[LEVEL[spec.level], spec.code]],
          '"command failed" lines',
        );
        const loud = h.entries().filter((e) => e.level >= LEVEL.warn);
        c.equal(
          loud.map((e) => e.msg),
          spec.level === 'info' ? [] : ['command failed'],
          'lines at warn or above',
        );
        const gets = botGets(h);
        c.equal(gets, spec.attempts, 'GET /v3/bots/:id attempts');
        c.equal(
          h.emu.requests.filter((r) => !r.path.startsWith('/v3/')).map((r) => r.path),
          [],
          'requests outside /v3',
        );
        return `${answer.outcome}, private ${JSON.stringify(description.slice(0, 48))}, ${spec.level} ×1, ${gets} GET /v3/bots`;
      }),
  };
}

const UNAVAILABLE = `❌ ${EN('errors.unavailable')}`;
const UNREADABLE = `❌ ${EN('errors.invalidResponse')}`;

const V3_CASES: V3Case[] = [
  {
    id: 'V1',
    fault: 'directory v3: 500 code 0 (/bot)',
    faults: [{ version: 3, kind: 'status', status: 500, path: /^\/bots\// }],
    code: 'Unavailable',
    level: 'warn',
    text: UNAVAILABLE,
    attempts: 3,
  },
  {
    id: 'V2',
    fault: 'directory v3: 502 HTML page (/bot)',
    faults: [{ version: 3, kind: 'html', status: 502, path: /^\/bots\// }],
    code: 'Unavailable',
    level: 'warn',
    text: UNAVAILABLE,
    attempts: 3,
  },
  {
    id: 'V3',
    fault: 'directory v3: 5 s stall, timeout 1 s (/bot)',
    faults: [{ version: 3, kind: 'stall', ms: 5_000, path: /^\/bots\// }],
    env: { DIRECTORY_TIMEOUT_MS: '1000' },
    code: 'Unavailable',
    level: 'warn',
    text: UNAVAILABLE,
    attempts: 3,
  },
  {
    id: 'V4',
    fault: 'directory v3: a 200 that is not the envelope (drift) (/bot)',
    faults: [{ version: 3, kind: 'drift', path: /^\/bots\// }],
    code: 'InvalidResponse',
    level: 'error',
    text: UNREADABLE,
    attempts: 1,
  },
  {
    id: 'V5',
    fault: 'directory v3: a record whose id is a path (ok:true, id "../../x") (/bot)',
    faults: [
      {
        version: 3,
        kind: 'text',
        status: 200,
        path: /^\/bots\//,
        body: JSON.stringify({ ok: true, result: { id: '../../x', name: 'x' } }),
      },
    ],
    code: 'InvalidResponse',
    level: 'error',
    text: UNREADABLE,
    attempts: 1,
  },
  {
    id: 'V6',
    fault: 'directory v3: 429 code 1, Retry-After 1 s, every time (/bot)',
    faults: [{ version: 3, kind: 'rate-limit', retryAfterMs: 1_000, path: /^\/bots\// }],
    code: 'RateLimited',
    level: 'info',
    text: /^❌ The directory is busy\. Try again <t:\d+:R>\.$/,
    attempts: 3,
  },
];

export const directoryV3Faults: Family = {
  title: 'directory faults on API v3 through the bot',
  stage: 1,
  rows: V3_CASES.map(v3Row),
};

/**
 * The volume of hostile comment texts: all 1,000 of test/support/hostile-texts.ts, each delivered
 * as a new comment, an edit and a deletion, read as the receiver reads a delivery and announced by
 * the bot's own handler (features/webhooks/handle.ts, render.ts) to a REST client that keeps the
 * bodies. Each body is judged as the e2e judges what reached the Discord stand-in: Discord's rules
 * for the message, whom the stand-in says it pings (everything pingable: mentionable roles, the
 * bot allowed to mention everyone), no raw mention, at most 4,000 characters of text, a title.
 * The whole path (receiver, store, discord.js, the stand-in) takes the first 200 on each engine in
 * test/e2e/webhooks.test.ts.
 */
import { MessageFlags } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { parseDelivery, storedEvent } from '../../../src/features/webhooks/events.js';
import { DirectoryEventHandler } from '../../../src/features/webhooks/handle.js';
import { createLogger } from '../../../src/log/logger.js';
import type { LayoutMessage } from '../../../src/render/message.js';
import type { StoredEvent } from '../../../src/store/webhooks.js';
import { textDisplayContents } from '../../discord/components-v2.js';
import { makeGuild, makeRole, pingsOf } from '../../discord/index.js';
import { validateMessage } from '../../discord/interactions.js';
import { ALL_PERMISSIONS } from '../../discord/permissions.js';
import { mentionProblems } from '../../e2e/harness.js';
import { emptyHandlerOptions, recordingRest } from '../../support/announcer.js';
import { HOSTILE_PIECES, hostileTexts } from '../../support/hostile-texts.js';
import { asEmbed, viewOf } from '../../support/layout-view.js';
import { LEVEL, LogSink } from '../../support/logs.js';
import { expectNoPing, expectWithinLimits } from '../render/helpers.js';

const GUILD = '300000000000000042';
const CHANNEL = '300000000000000043';
const BORIS = '310000000000000002';
const NOW = Date.UTC(2026, 0, 15, 12);
const NOBODY = { everyone: false, users: [], roles: [] };
// Every mention a hostile text holds could ping here, but for allowed_mentions: the role it names
// is mentionable, and the bot may mention everyone.
const guild = makeGuild({ id: GUILD, roles: [makeRole({ id: '310000000000000003', mentionable: true })] });
const EVERYTHING = BigInt(ALL_PERMISSIONS);

type Change = 'new' | 'edit' | 'delete';
/** A comment's old and new texts. */
type Texts = [string | null, string | null];

/** The handler as the bot wires it, with a REST client that keeps what would be posted. */
function announcer(locale: () => string) {
  const { rest, posted } = recordingRest();
  const sink = new LogSink();
  const handler = new DirectoryEventHandler(
    emptyHandlerOptions({
      rest,
      webhooks: {
        get: async () => ({
          guildId: GUILD,
          channelId: CHANNEL,
          problem: null,
          lastEventAt: null,
          updatedAt: NOW,
        }),
        setProblem: async () => undefined,
      },
      guild: () => ({ name: 'Hostile', preferredLocale: locale() }),
      logger: createLogger({ level: 'debug', destination: sink }),
      now: () => NOW,
    }),
  );
  return { handler, posted, sink };
}

/** A delivery as the directory sends it (test/emulator/webhooks.ts), through JSON as the receiver reads it. */
function delivery(change: Change, i: number, old: string | null, now: string | null): unknown {
  const body = {
    type: `${change}_server_comment`,
    data: {
      user: BORIS,
      comment: {
        vote: { old: change === 'new' ? null : 1, new: change === 'delete' ? null : 1 },
        old,
        new: now,
      },
      ...(change === 'delete' ? { reason: i % 2 === 0 ? 'moderation' : 'self' } : {}),
      at: NOW - 3_600_000 + i,
    },
  };
  return JSON.parse(JSON.stringify(body));
}

/** What is wrong with one posted body; [] when it is as the e2e wants it. */
function problemsOf(body: Record<string, unknown>): string[] {
  const found: string[] = [];
  const invalid = validateMessage(body, []);
  if (invalid) found.push(`refused by Discord: ${JSON.stringify(invalid.body)}`);
  if (body.flags !== MessageFlags.IsComponentsV2) found.push(`flags ${String(body.flags)}`);
  if (body.embeds !== undefined) found.push('embeds beside a layout');
  found.push(...mentionProblems(body));
  const text = textDisplayContents(body.components).join('\n');
  const pings = pingsOf(text, body.allowed_mentions, guild, EVERYTHING);
  if (JSON.stringify(pings) !== JSON.stringify(NOBODY)) found.push(`pings ${JSON.stringify(pings)}`);
  const length = viewOf(body).prose.join('').length;
  if (length > 4_000) found.push(`${length} characters of text, over Discord's 4000`);
  if (!asEmbed(body).title) found.push('no title');
  const message = { layout: body.components } as LayoutMessage;
  for (const check of [() => expectWithinLimits(message), () => expectNoPing(message, [BORIS])]) {
    try {
      check();
    } catch (err) {
      found.push((err as Error).message.split('\n')[0] ?? 'failed');
    }
  }
  return found;
}

describe('1,000 hostile comment texts, announced by the bot', () => {
  const texts = hostileTexts(1_000);

  it('hold every hostile piece, and the first 200 (the e2e) do too', () => {
    const missing = (some: string[]) => HOSTILE_PIECES.filter((p) => !some.some((text) => text.includes(p)));
    expect(missing(texts)).toEqual([]);
    expect(missing(texts.slice(0, 200))).toEqual([]);
  });

  it.each([
    ['new', (i: number): Texts => [null, texts[i] ?? null]],
    ['edit', (i: number): Texts => [texts[i] ?? null, texts[(i + 1) % texts.length] ?? null]],
    ['delete', (i: number): Texts => [texts[i] ?? null, null]],
  ] as const)(
    '%s_server_comment: each posted, valid for Discord, pinging nobody, within 4,000 characters, titled',
    async (change, textsOf) => {
      let i = 0;
      const { handler, posted, sink } = announcer(() => (i % 3 === 2 ? 'ru' : 'en-US'));
      const problems: string[] = [];
      for (; i < texts.length; i++) {
        const [old, now] = textsOf(i);
        const parsed = parseDelivery(delivery(change, i, old, now), GUILD, NOW);
        if (parsed.kind !== 'event') {
          problems.push(`${i}: delivery ${parsed.kind}`);
          continue;
        }
        const stored: StoredEvent = {
          id: parsed.id,
          guildId: GUILD,
          type: parsed.type,
          payload: JSON.stringify(parsed.event),
          receivedAt: NOW,
          state: 'claimed',
          nonce: `nonce-${i}`,
          failure: null,
          traceParent: null,
        };
        expect(storedEvent(stored.payload)).toEqual(parsed.event);
        const before = posted.length;
        const outcome = await handler.handle(stored, {
          id: stored.id,
          by: 'me',
          nonce: `nonce-${i}`,
          expiresAt: NOW,
        });
        if (outcome.kind !== 'sent') problems.push(`${i}: ${JSON.stringify(outcome)}`);
        const body = posted[before];
        if (posted.length !== before + 1 || !body) {
          problems.push(`${i}: ${posted.length - before} messages posted`);
          continue;
        }
        problems.push(...problemsOf(body).map((p) => `${i}: ${p}`));
      }
      expect(problems).toEqual([]);
      expect(posted).toHaveLength(texts.length);
      expect(sink.entries.filter((e) => e.level >= LEVEL.warn)).toEqual([]);
    },
  );
});

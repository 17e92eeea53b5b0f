/**
 * Waits that outlive the interaction. An interaction token lasts 15 minutes; a directory 429 can
 * ask for more. /up passes a deadline, so its client refuses such a wait at once and the user
 * is told when to come back (rate-limits.test.ts). Look-ups and comment pages must do the same,
 * and stopping the bot must not wait for a retry scheduled minutes ahead.
 */
import { describe, expect, it } from 'vitest';
import { makeGuild } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { expectPrivate } from './expectations.js';
import { type Answer, type Harness, optionString, secretLeaks, startHarness } from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
/** Past the 15 minutes an interaction token lives. */
const LONGER_THAN_AN_INTERACTION_MS = 16 * 60_000;
const ANSWER_WITHIN_MS = 5_000;

async function withHarness(env: Record<string, string>, test: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness({ guilds: [guild], env });
  try {
    await test(h);
    expect(secretLeaks(h)).toEqual([]);
    expect(h.unhandled).toEqual([]);
  } finally {
    await h.close();
  }
}

/** "Try again <t:…:R>." as a Unix time. */
function retryAt(answer: Answer): number {
  const text = expectPrivate(answer).embed.description ?? '';
  const match = /The directory is busy\. Try again <t:(\d+):R>\.$/.exec(text);
  if (!match) throw new Error(`not a "busy" answer: ${text}`);
  return Number(match[1]);
}

describe('waits longer than the interaction', () => {
  it('look-ups and comment pages are refused at once with the time to come back', async () => {
    await withHarness({}, async (h) => {
      h.emu.faults.add({ kind: 'rate-limit', retryAfterMs: LONGER_THAN_AN_INTERACTION_MS, path: /^\/bot\// });
      const soon = Math.floor(Date.now() / 1000) + LONGER_THAN_AN_INTERACTION_MS / 1000;
      const card = await h.run(
        { guildId: guild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
        ANSWER_WITHIN_MS,
      );
      expect(card.outcome).toBe('error:RateLimited');
      expect(retryAt(card)).toBeGreaterThanOrEqual(soon - 5);
      expect(h.emu.requests).toHaveLength(1);

      // The directory's wait holds for every request of the bot: the next ones are refused locally.
      const server = await h.run(
        { guildId: guild.id, name: 'server', options: [optionString('ref', 'boticord')] },
        ANSWER_WITHIN_MS,
      );
      expect(server.outcome).toBe('error:RateLimited');
      expect(retryAt(server)).toBeGreaterThanOrEqual(soon - 5);
      const page = await h.click(
        { guildId: guild.id, customId: `comments:o:b:${IDS.botManyComments}:0` },
        ANSWER_WITHIN_MS,
      );
      expect(page.outcome).toBe('error:RateLimited');
      expect(h.emu.requests).toHaveLength(1);
    });
  });

  it('stopping the bot does not wait for a retry scheduled a minute ahead', async () => {
    await withHarness({ SHUTDOWN_TIMEOUT_MS: '500' }, async (h) => {
      h.emu.faults.add({ kind: 'rate-limit', retryAfterMs: 60_000, path: /^\/bot\// });
      h.send({ guildId: guild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] });
      const deadline = Date.now() + ANSWER_WITHIN_MS;
      while (h.emu.requests.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(h.emu.requests.map((r) => r.status)).toEqual([429]);
      const started = Date.now();
      const stopped = await Promise.race([
        h.bot.stop().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3_000)),
      ]);
      expect(stopped, `bot.stop() still running after ${Date.now() - started} ms`).toBe(true);
    });
  });
});

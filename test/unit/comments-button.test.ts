/**
 * The comments pager's button on a page from before the pages were Components V2 layouts: an
 * edit cannot turn its embed into a layout, so the next page comes as a private message of its
 * own; on a layout page the page is edited in place.
 */
import { type ButtonInteraction, MessageFlags, MessageFlagsBitField } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { comments } from '../../commands/comments.js';
import { translator } from '../../src/i18n/index.js';
import type { HandlerContext } from '../../src/interactions/types.js';
import { commentsCustomId } from '../../src/render/custom-id.js';
import type { RenderedMessage } from '../../src/render/message.js';

const BOT = '724663360934772797';

function context(pageFlags: number) {
  const followUps: Array<{ flags?: number; components?: unknown[]; embeds?: unknown }> = [];
  const edits: RenderedMessage[] = [];
  const interaction = {
    customId: commentsCustomId({ mode: 'page', kind: 'bot', id: BOT, page: 1 }),
    message: { flags: new MessageFlagsBitField(pageFlags) },
    followUp: async (options: (typeof followUps)[number]) => {
      followUps.push(options);
    },
  } as unknown as ButtonInteraction;
  const list = Array.from({ length: 12 }, (_, i) => ({
    userId: String(100_000_000_000_000_000n + BigInt(i)),
    text: `comment ${i}`,
    vote: 1,
    isUpdated: false,
    at: new Date(1_650_000_000_000 + i),
  }));
  const ctx = {
    interaction,
    deps: {
      directory: { getBotComments: async () => list },
      discord: { identity: async () => ({ name: 'Kerdoku' }) },
      now: () => Date.now(),
    },
    t: translator('en-US'),
    locale: 'en-US',
    deadline: Date.now() + 60_000,
    reply: {
      public: async (m: RenderedMessage) => void edits.push(m),
      private: async (m: RenderedMessage) => void edits.push(m),
    },
  } as unknown as HandlerContext<ButtonInteraction>;
  return { ctx, followUps, edits };
}

describe('the comments pager', () => {
  it('edits a layout page in place', async () => {
    const { ctx, followUps, edits } = context(MessageFlags.Ephemeral | MessageFlags.IsComponentsV2);
    expect(await comments.execute(ctx)).toBe('page:1');
    expect(edits).toHaveLength(1);
    expect(followUps).toEqual([]);
  });

  it('answers a page from before the layouts (an embed) with a private message of its own', async () => {
    const { ctx, followUps, edits } = context(MessageFlags.Ephemeral);
    expect(await comments.execute(ctx)).toBe('page:1:new');
    expect(edits).toEqual([]);
    expect(followUps).toHaveLength(1);
    expect(followUps[0]?.flags).toBe(MessageFlags.Ephemeral | MessageFlags.IsComponentsV2);
    expect(followUps[0]?.embeds).toBeUndefined();
    expect(JSON.stringify(followUps[0]?.components)).toContain('Page 2 of 3');
  });
});

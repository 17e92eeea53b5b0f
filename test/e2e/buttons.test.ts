/**
 * Buttons: a card's "Comments" opens a private page, previous / next edit it in place, the ends
 * are disabled; the pager's state lives in the custom_id, so a button from before a restart works
 * on a new bot instance; unknown and malformed buttons say they have expired.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild, makeUser, type ViewedMessage } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { expectPublic, itLeavesNoTrace } from './expectations.js';
import {
  type Answer,
  type Button,
  buttonsOf,
  EPHEMERAL,
  embedOf,
  type Harness,
  isEphemeral,
  optionString,
  startHarness,
} from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const sonata = makeUser({ id: IDS.botManyComments, username: 'sonata', global_name: 'Sonata', bot: true });
const MANY = IDS.botManyComments;
const openId = `comments:o:b:${MANY}:0`;
const pageId = (page: number): string => `comments:p:b:${MANY}:${page}`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [guild], users: [sonata] });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

function callbackType(answer: Answer): { type: number; flags: number } {
  const body = answer.requests[0]?.body as { type: number; data?: { flags?: number } };
  return { type: body.type, flags: body.data?.flags ?? 0 };
}

async function card(ref: string, command = 'bot'): Promise<ViewedMessage> {
  const answer = await h.run({ guildId: guild.id, name: command, options: [optionString('ref', ref)] });
  return expectPublic(answer).message;
}

function click(customId: string, message: ViewedMessage): Promise<Answer> {
  return h.click({ guildId: guild.id, customId, messageId: message.id });
}

/** The page a click left: the message the interaction answered in, still private. */
function pageOf(answer: Answer): ViewedMessage {
  const page = answer.view.original;
  if (!page) throw new Error('the click left no message');
  expect(page.deleted).toBe(false);
  expect(isEphemeral(page)).toBe(true);
  expect(answer.view.followUps).toEqual([]);
  return page;
}

function pager(page: ViewedMessage): Array<Pick<Button, 'label' | 'custom_id' | 'disabled'>> {
  return buttonsOf(page).map(({ label, custom_id, disabled }) => ({ label, custom_id, disabled }));
}

describe('comment paging', () => {
  it('Comments opens page 1 of 3 privately; next / previous edit it; the ends are disabled', async () => {
    const botCard = await card('sonata');
    expect(buttonsOf(botCard).map((b) => b.custom_id)).toContain(openId);

    const opened = await click(openId, botCard);
    expect(opened.outcome).toBe('page:0');
    expect(callbackType(opened)).toEqual({ type: 5, flags: EPHEMERAL });
    const first = pageOf(opened);
    expect(first.id).not.toBe(botCard.id);
    const embed = embedOf(first);
    expect(embed.title).toBe('Comments on bot Sonata');
    expect(embed.footer?.text).toBe('Page 1 of 3 · 15 comments');
    expect(embed.description?.split('\n\n')).toHaveLength(5);
    expect(embed.description).toContain('👍 <@700000000000000001>');
    expect(embed.description).toContain('> Комментарий №5');
    expect(embed.description).not.toContain('№6');
    expect(embed.description).toContain('edited');
    expect(pager(first)).toEqual([
      { label: 'Previous', custom_id: pageId(0), disabled: true },
      { label: 'Next', custom_id: pageId(1), disabled: false },
    ]);

    const second = await click(pageId(1), first);
    expect(second.outcome).toBe('page:1');
    expect(callbackType(second).type).toBe(6);
    const page2 = pageOf(second);
    expect(page2.id).toBe(first.id);
    expect(embedOf(page2).footer?.text).toBe('Page 2 of 3 · 15 comments');
    expect(embedOf(page2).description).toContain('Комментарий №6');
    expect(pager(page2)).toEqual([
      { label: 'Previous', custom_id: pageId(0), disabled: false },
      { label: 'Next', custom_id: pageId(2), disabled: false },
    ]);

    const page3 = pageOf(await click(pageId(2), page2));
    expect(embedOf(page3).footer?.text).toBe('Page 3 of 3 · 15 comments');
    expect(embedOf(page3).description).toContain('Комментарий №15');
    expect(embedOf(page3).description).not.toContain('Комментарий №10');
    expect(pager(page3)).toEqual([
      { label: 'Previous', custom_id: pageId(1), disabled: false },
      { label: 'Next', custom_id: pageId(2), disabled: true },
    ]);

    const back = pageOf(await click(pageId(1), page3));
    expect(back.id).toBe(first.id);
    expect(embedOf(back).footer?.text).toBe('Page 2 of 3 · 15 comments');
    // Every click asked the directory again: nothing was kept in memory.
    expect(h.emu.requests.filter((r) => r.path === `/v2/bot/${MANY}/comments`)).toHaveLength(4);
  });

  it('a short list is one page without pager buttons', async () => {
    const serverCard = await card('boticord', 'server');
    const opened = await click(`comments:o:s:${IDS.serverFresh}:0`, serverCard);
    const page = pageOf(opened);
    const embed = embedOf(page);
    expect(embed.title).toBe('Comments on server BotiCord Community');
    expect(embed.footer?.text).toBe('Page 1 of 1 · 3 comments');
    expect(embed.description?.match(/^(👍|👎)/gmu)).toEqual(['👍', '👍', '👎']);
    expect(buttonsOf(page)).toEqual([]);
  });

  it('a failure while paging leaves the page as it was and explains privately', async () => {
    const first = pageOf(await click(openId, await card('sonata')));
    h.emu.faults.add({ kind: 'drift', path: /\/comments$/ });
    const failed = await click(pageId(1), first);
    expect(failed.outcome).toBe('error:InvalidResponse');
    expect(failed.view.original?.embeds).toEqual(first.embeds);
    expect(failed.view.followUps).toHaveLength(1);
    const note = failed.view.followUps[0] as ViewedMessage;
    expect(isEphemeral(note)).toBe(true);
    expect(embedOf(note).description).toBe(
      '❌ The directory sent an answer the bot cannot read. Try again later.',
    );
  });
});

describe('buttons across a restart', () => {
  it('a button from the previous bot instance works on a new one', async () => {
    const botCard = await card('sonata');
    const first = pageOf(await click(openId, botCard));
    const nextId = buttonsOf(first).find((b) => b.label === 'Next')?.custom_id ?? '';
    expect(nextId).toBe(pageId(1));
    const oldClient = h.bot.client;

    await h.restartBot();
    expect(h.bot.client).not.toBe(oldClient);
    expect(oldClient.isReady()).toBe(false);
    h.reset();

    const paged = await click(nextId, first);
    expect(paged.outcome).toBe('page:1');
    expect(embedOf(pageOf(paged)).footer?.text).toBe('Page 2 of 3 · 15 comments');
    const reopened = await click(openId, botCard);
    expect(embedOf(pageOf(reopened)).footer?.text).toBe('Page 1 of 3 · 15 comments');
    expect(h.emu.requests.map((r) => r.path)).toEqual([
      `/v2/bot/${MANY}/comments`,
      `/v2/bot/${MANY}/comments`,
    ]);
  });
});

describe('buttons the bot does not know', () => {
  it('a foreign custom_id is answered privately as expired', async () => {
    const answer = await h.click({ guildId: guild.id, customId: 'vote:up:123' });
    expect(answer.outcome).toBe('unknown');
    const body = answer.requests[0]?.body as { type: number; data: { content: string; flags: number } };
    expect(body.type).toBe(4);
    expect(body.data.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(body.data.content).toBe('These buttons have expired. Run the command again.');
  });

  it('a malformed comments custom_id is answered as expired, without a directory call', async () => {
    const answer = await h.click({ guildId: guild.id, customId: 'comments:p:b:12:1', locale: 'ru' });
    expect(answer.outcome).toBe('expired');
    const page = pageOf(answer);
    expect(embedOf(page).description).toBe('Эти кнопки устарели. Вызовите команду снова.');
    expect(h.emu.requests).toEqual([]);
  });
});

itLeavesNoTrace(() => h);

import { describe, expect, it } from 'vitest';
import { commentListSchema, profileCommentsSchema } from '../../../src/directory/schemas.js';
import type { DirectoryComment } from '../../../src/directory/types.js';
import {
  COMMENTS_PER_PAGE,
  flattenProfileComments,
  type PagedComment,
  pageCount,
  renderCommentsPage,
  voteIcon,
} from '../../../src/render/comments.js';
import { type CommentsState, decodeComments } from '../../../src/render/custom-id.js';
import type { RenderedMessage } from '../../../src/render/message.js';
import { directorySample as sample } from '../../support/samples.js';
import {
  customIdButtons,
  en,
  expectNoPing,
  expectWithinLimits,
  HOSTILE_NAME,
  RLO,
  ru,
  snowflake,
  view,
} from './helpers.js';

describe('comments pages', () => {
  const BOT_ID = '724663360934772797';

  function comments(n: number): DirectoryComment[] {
    return Array.from({ length: n }, (_, i) => ({
      userId: snowflake(i),
      text: `comment ${i}`,
      vote: ([1, 0, -1] as const)[i % 3] ?? 0,
      isUpdated: false,
      at: new Date(1_650_000_000_000 + i * 1000),
    }));
  }

  function decodedButtons(msg: RenderedMessage): Array<{ state: CommentsState | null; disabled: boolean }> {
    return customIdButtons(msg).map((b) => ({ state: decodeComments(b.customId), disabled: b.disabled }));
  }

  it('renders the real bot comments on one page without buttons', () => {
    const list = commentListSchema.parse(sample('bot-comments.json'));
    const msg = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 0, en);
    expectWithinLimits(msg);
    expectNoPing(msg, ['525366699969478676', '178404926869733376']);
    const embed = view(msg);
    expect(embed.title).toBe('Comments on bot kerdoku');
    expect(embed.description).toBe(
      '👍 <@525366699969478676> · <t:1644388399:R>\n> aboba\n\n' +
        '👍 <@178404926869733376> · <t:1650183132:R> · edited\n> Отличный бот, пользуюсь каждый день!',
    );
    expect(embed.footer).toBe('Page 1 of 1 · 2 comments');
    expect(view(msg).rows).toEqual([]);
  });

  it('renders the server comments with each vote icon', () => {
    const list = commentListSchema.parse(sample('server-comments.json'));
    const msg = renderCommentsPage('server', '722424773233213460', 'BotiCord Community', list, 0, ru);
    const description = view(msg).description ?? '';
    expect(description).toContain('👎 <@525366699969478676> · <t:1650190000:R> · изменён');
    expect(view(msg).title).toBe('Отзывы о сервере BotiCord Community');
    expect(view(msg).footer).toBe('Страница 1 из 1 · 3 отзыва');
    expect(voteIcon(1)).toBe('👍');
    expect(voteIcon(-1)).toBe('👎');
    expect(voteIcon(0)).toBe('·');
  });

  it('pages: first, middle and last, with the buttons disabled at the ends and IDs that decode', () => {
    const list = comments(12);
    expect(pageCount(12)).toBe(3);
    expect(pageCount(0)).toBe(1);
    expect(pageCount(COMMENTS_PER_PAGE)).toBe(1);

    const first = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 0, en);
    expectWithinLimits(first);
    expect(view(first).footer).toBe('Page 1 of 3 · 12 comments');
    expect(view(first).description).toContain('comment 0');
    expect(view(first).description).toContain('comment 4');
    expect(view(first).description).not.toContain('comment 5');
    expect(view(first).description?.startsWith('👍 <@')).toBe(true);
    expect(decodedButtons(first)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 0 }, disabled: true },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 1 }, disabled: false },
    ]);
    expect(customIdButtons(first).map((b) => b.label)).toEqual(['Previous', 'Next']);

    const middle = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 1, en);
    expectWithinLimits(middle);
    expect(view(middle).footer).toBe('Page 2 of 3 · 12 comments');
    expect(view(middle).description).toContain('comment 5');
    expect(decodedButtons(middle)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 0 }, disabled: false },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 2 }, disabled: false },
    ]);

    const last = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 2, en);
    expectWithinLimits(last);
    expect(view(last).footer).toBe('Page 3 of 3 · 12 comments');
    expect(view(last).description?.split('\n\n')).toHaveLength(2);
    expect(decodedButtons(last)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 1 }, disabled: false },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 2 }, disabled: true },
    ]);
  });

  it('clamps pages out of range', () => {
    const list = comments(12);
    const footer = (page: number) => view(renderCommentsPage('server', BOT_ID, 's', list, page, en)).footer;
    expect(footer(99)).toBe('Page 3 of 3 · 12 comments');
    expect(footer(-5)).toBe('Page 1 of 3 · 12 comments');
    expect(footer(Number.NaN)).toBe('Page 1 of 3 · 12 comments');
    expect(footer(1.7)).toBe('Page 2 of 3 · 12 comments');
  });

  it('Russian footers use the right plural', () => {
    const footer = (n: number) =>
      view(renderCommentsPage('bot', BOT_ID, 'k', comments(n), 0, ru)).footer ?? '';
    expect(footer(1)).toBe('Страница 1 из 1 · 1 отзыв');
    expect(footer(2)).toBe('Страница 1 из 1 · 2 отзыва');
    expect(footer(5)).toBe('Страница 1 из 1 · 5 отзывов');
    expect(footer(11)).toBe('Страница 1 из 3 · 11 отзывов');
    expect(footer(21)).toBe('Страница 1 из 5 · 21 отзыв');
  });

  it('an empty list says so and has no buttons', () => {
    const msg = renderCommentsPage('profile', BOT_ID, 'x', [], 0, en);
    expect(view(msg).description).toBe('No comments yet.');
    expect(view(msg).footer).toBe('Page 1 of 1 · 0 comments');
    expect(view(msg).title).toBe('Comments by x');
    expect(view(msg).rows).toEqual([]);
  });

  it('keeps hostile comments within limits and mention-free', () => {
    const hostile: DirectoryComment[] = Array.from({ length: 7 }, (_, i) => ({
      userId: i === 0 ? '@everyone' : snowflake(i),
      text: `${HOSTILE_NAME}\n${'\n'.repeat(2000)}${RLO}${'😀'.repeat(6000)}`,
      vote: 1,
      isUpdated: true,
      at: null,
    }));
    const msg = renderCommentsPage('bot', BOT_ID, HOSTILE_NAME, hostile, 0, en);
    expectWithinLimits(msg);
    expectNoPing(
      msg,
      hostile.map((c) => c.userId),
    );
    // every one of the five comments on the page is still there
    expect(view(msg).description?.match(/^👍 /gm)).toHaveLength(5);
  });

  it('has no page buttons when the ID cannot travel in a custom_id', () => {
    const msg = renderCommentsPage('bot', 'not-an-id', 'x', comments(12), 0, en);
    expectWithinLimits(msg);
    expect(view(msg).rows).toEqual([]);
  });

  it('flattenProfileComments puts the newest first, undated last, and says what each is about', () => {
    const real = flattenProfileComments(profileCommentsSchema.parse(sample('profile-comments.json')));
    expect(real.map((c) => [c.about, c.at?.getTime()])).toEqual([
      ['bot', 1_650_183_132_145],
      ['server', 1_650_181_000_000],
    ]);
    const at = (ms: number | null): Pick<DirectoryComment, 'at'> => ({
      at: ms === null ? null : new Date(ms),
    });
    const base = { userId: BOT_ID, vote: 0 as const, isUpdated: false };
    const flat = flattenProfileComments({
      bots: [
        { ...base, text: 'b-old', ...at(1000) },
        { ...base, text: 'b-none', ...at(null) },
        { ...base, text: 'b-same', ...at(5000) },
      ],
      servers: [
        { ...base, text: 's-new', ...at(9000) },
        { ...base, text: 's-same', ...at(5000) },
        { ...base, text: 's-none', ...at(null) },
      ],
    });
    expect(flat.map((c) => c.text)).toEqual(['s-new', 'b-same', 's-same', 'b-old', 'b-none', 's-none']);

    const msg = renderCommentsPage(
      'profile',
      '178404926869733376',
      'cipherka',
      real as PagedComment[],
      0,
      en,
    );
    expect(view(msg).description).toContain('· edited · on a bot');
    expect(view(msg).description).toContain('· on a server');
  });
});

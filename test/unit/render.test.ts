import { readFileSync } from 'node:fs';
import { type APIButtonComponent, type APIEmbed, ButtonStyle, ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import {
  botReferenceListSchema,
  botSchema,
  commentListSchema,
  profileCommentsSchema,
  profileSchema,
  serverSchema,
  serverUpSchema,
} from '../../src/directory/schemas.js';
import type {
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryServer,
  ServerUpResult,
} from '../../src/directory/types.js';
import { translator } from '../../src/i18n/index.js';
import {
  formatNumber,
  inviteUrl,
  renderBotCard,
  renderProfileCard,
  renderServerCard,
} from '../../src/render/cards.js';
import { COLORS } from '../../src/render/colors.js';
import {
  COMMENTS_PER_PAGE,
  flattenProfileComments,
  type PagedComment,
  pageCount,
  renderCommentsPage,
  voteIcon,
} from '../../src/render/comments.js';
import { actionButton, linkButton, rows } from '../../src/render/components.js';
import {
  type CommentsState,
  commentsCustomId,
  decodeComments,
  encodeComments,
  isCommentsId,
} from '../../src/render/custom-id.js';
import { embedLength, fitEmbed, LIMITS } from '../../src/render/limits.js';
import type { RenderedMessage } from '../../src/render/message.js';
import {
  directoryMarkdown,
  httpUrl,
  neutralizeMentions,
  plainLabel,
  plainText,
  safeCode,
  safeLine,
  safeText,
  stripControl,
  truncate,
  userMention,
} from '../../src/render/text.js';
import { nextUpText, renderUpResult, upOutcome } from '../../src/render/up.js';

const sample = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../fixtures/directory-samples/${name}`, import.meta.url), 'utf8'));

const en = translator('en-US');
const ru = translator('ru');

const realBot = (): DirectoryBot => botSchema.parse(sample('bot.json'));
const realServer = (): DirectoryServer => serverSchema.parse(sample('server.json'));
const realProfile = (): DirectoryProfile => profileSchema.parse(sample('profile.json'));

/** Discord shows numbers grouped with a no-break space in Russian; compare with plain spaces. */
const spaces = (s: string): string => s.replace(/[\u00a0\u202f]/g, ' ');

const HOSTILE_NAME = '@everyone <@&123> **bold** [x](javascript:alert(1))';
const RLO = '\u202e';
const CONTROLS = '\u0000\u0007\u001b[31m\u007f\u0085';
const BAD_URLS = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'ftp://example.com/file',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'mailto:a@example.com',
  'steam://open/games',
];

// ---------------------------------------------------------------------------------------------
// Independent checks on what a renderer produced.

function embedTotal(embed: APIEmbed): number {
  let n = 0;
  n += embed.title?.length ?? 0;
  n += embed.description?.length ?? 0;
  n += embed.footer?.text.length ?? 0;
  n += embed.author?.name.length ?? 0;
  for (const f of embed.fields ?? []) n += f.name.length + f.value.length;
  return n;
}

function labelOf(b: APIButtonComponent): string {
  return 'label' in b ? (b.label ?? '') : '';
}

function buttonsOf(msg: RenderedMessage): APIButtonComponent[] {
  return msg.components.flatMap((row) => row.components);
}

function linkButtons(msg: RenderedMessage): Array<{ label: string; url: string }> {
  return buttonsOf(msg).flatMap((b) =>
    b.style === ButtonStyle.Link ? [{ label: labelOf(b), url: b.url }] : [],
  );
}

function customIdButtons(
  msg: RenderedMessage,
): Array<{ label: string; customId: string; disabled: boolean }> {
  return buttonsOf(msg).flatMap((b) =>
    'custom_id' in b ? [{ label: labelOf(b), customId: b.custom_id, disabled: b.disabled ?? false }] : [],
  );
}

function texts(msg: RenderedMessage): string[] {
  const out: string[] = [];
  for (const e of msg.embeds) {
    if (e.title !== undefined) out.push(e.title);
    if (e.description !== undefined) out.push(e.description);
    if (e.footer) out.push(e.footer.text);
    if (e.author) out.push(e.author.name);
    for (const f of e.fields ?? []) out.push(f.name, f.value);
  }
  for (const b of buttonsOf(msg)) out.push(labelOf(b));
  return out;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Every Discord limit the issue names, checked on the finished message. */
function expectWithinLimits(msg: RenderedMessage): void {
  expect(msg.embeds.length).toBeLessThanOrEqual(10);
  for (const e of msg.embeds) {
    expect(e.title?.length ?? 0).toBeLessThanOrEqual(256);
    expect(e.description?.length ?? 0).toBeLessThanOrEqual(4096);
    expect(e.footer?.text.length ?? 0).toBeLessThanOrEqual(2048);
    expect(e.fields?.length ?? 0).toBeLessThanOrEqual(25);
    for (const f of e.fields ?? []) {
      expect(f.name.length).toBeGreaterThan(0);
      expect(f.name.length).toBeLessThanOrEqual(256);
      expect(f.value.trim().length).toBeGreaterThan(0);
      expect(f.value.length).toBeLessThanOrEqual(1024);
    }
    expect(embedTotal(e)).toBeLessThanOrEqual(6000);
    expect(embedLength(e)).toBe(embedTotal(e));
    if (e.thumbnail) expect(e.thumbnail.url).toMatch(/^https?:\/\//);
  }
  expect(msg.components.length).toBeLessThanOrEqual(5);
  const ids = new Set<string>();
  for (const row of msg.components) {
    expect(row.type).toBe(ComponentType.ActionRow);
    expect(row.components.length).toBeGreaterThan(0);
    expect(row.components.length).toBeLessThanOrEqual(5);
    for (const b of row.components) {
      expect(b.type).toBe(ComponentType.Button);
      expect(labelOf(b).length).toBeGreaterThan(0);
      expect(labelOf(b).length).toBeLessThanOrEqual(80);
      if (b.style === ButtonStyle.Link) {
        expect(new URL(b.url).protocol).toMatch(/^https?:$/);
        expect(b.url.length).toBeLessThanOrEqual(512);
      } else if ('custom_id' in b) {
        expect(b.custom_id.length).toBeLessThanOrEqual(100);
        expect(ids.has(b.custom_id), `duplicate custom_id ${b.custom_id}`).toBe(false);
        ids.add(b.custom_id);
      }
    }
  }
  for (const s of texts(msg)) {
    expect(s, 'lone surrogate').not.toMatch(LONE_SURROGATE);
    expect(s, 'control or bidi character').not.toMatch(CONTROL);
  }
}

/** Nothing renders as a mass or role mention; user mentions only of the IDs allowed. */
function expectNoPing(msg: RenderedMessage, allowedUsers: readonly string[] = []): void {
  for (const s of texts(msg)) {
    expect(s).not.toMatch(/@(everyone|here)/i);
    expect(s).not.toMatch(/<@&/);
    expect(s).not.toMatch(/<#/);
    for (const m of s.matchAll(/<@!?(\d+)>/g)) expect(allowedUsers).toContain(m[1]);
  }
}

function fieldValue(msg: RenderedMessage, name: string): string | undefined {
  return msg.embeds[0]?.fields?.find((f) => f.name === name)?.value;
}

function snowflake(n: number): string {
  return String(100_000_000_000_000_000n + BigInt(n));
}

// ---------------------------------------------------------------------------------------------

describe('text helpers', () => {
  it('truncate keeps short text, cuts with an ellipsis and never splits a surrogate pair', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect(truncate('abc', 0)).toBe('');
    const emoji = `${'a'.repeat(8)}😀😀`;
    for (let max = 1; max < emoji.length; max++) {
      const cut = truncate(emoji, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(cut).not.toMatch(LONE_SURROGATE);
      expect(cut.endsWith('…')).toBe(true);
    }
    expect(truncate(`a${'😀'.repeat(3)}`, 3)).toBe('a…');
  });

  it('neutralizeMentions breaks every mention form', () => {
    const out = neutralizeMentions('@everyone @here @EVERYONE <@123> <@!123> <@&123> <#123>');
    expect(out).not.toMatch(/@(everyone|here)/i);
    expect(out).not.toMatch(/<[@#]/);
  });

  it('stripControl removes C0/C1 controls and bidi overrides, keeps newlines and tabs', () => {
    expect(stripControl(`a${CONTROLS}b${RLO}c\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069d\te\nf`)).toBe(
      'a[31mbcd\te\nf',
    );
    expect(stripControl('a\r\nb\rc\u2028d')).toBe('a\nb\nc\nd');
  });

  it('safeText escapes markdown, masked links, headings, lists and quotes', () => {
    const out = safeText(HOSTILE_NAME, 1000);
    expect(out).toContain('\\*\\*bold\\*\\*');
    expect(out).toContain('\\[x\\](javascript:alert(1))');
    expect(out).not.toMatch(/@everyone/);
    expect(out).not.toMatch(/<@&/);
    const blocks = safeText(
      '# head\n> quote\n>>> all\n-# small\n- item\n1. one\n`code` ||spoiler|| ~~s~~ __u__',
      1000,
    );
    expect(blocks).toBe(
      '\\# head\n\\> quote\n\\>>> all\n\\-# small\n\\- item\n1\\. one\n\\`code\\` \\|\\|spoiler\\|\\| \\~\\~s\\~\\~ \\_\\_u\\_\\_',
    );
    expect(safeText('a\\b', 10)).toBe('a\\\\b');
    expect(safeText(null, 10)).toBe('');
    expect(safeText(undefined, 10)).toBe('');
  });

  it('safeLine folds whitespace; plainText and plainLabel only cut and break mentions', () => {
    expect(safeLine('  a \n\n b\t c ', 100)).toBe('a b c');
    expect(safeLine('x'.repeat(300), 256)).toHaveLength(256);
    expect(plainText('@here *x*\n', 100)).toBe('@\u200bhere *x*');
    expect(plainLabel(` ${'y'.repeat(100)} `)).toHaveLength(80);
  });

  it('safeCode shows text verbatim in a code span, with backticks replaced', () => {
    expect(safeCode('*', 32)).toBe('`*`');
    expect(safeCode('a_b', 32)).toBe('`a_b`');
    expect(safeCode('a`b', 32)).toBe('`aˋb`');
    expect(safeCode('   ', 32)).toBe('');
    expect(safeCode(null, 32)).toBe('');
    expect(safeCode('x'.repeat(100), 32)).toHaveLength(32);
    expect(safeCode('@everyone', 32)).not.toContain('@everyone');
  });

  it('httpUrl admits only http(s)', () => {
    expect(httpUrl('https://kerdoku.top')).toBe('https://kerdoku.top/');
    expect(httpUrl('http://example.com/a?b=1')).toBe('http://example.com/a?b=1');
    expect(httpUrl('HTTPS://EXAMPLE.COM')).toBe('https://example.com/');
    for (const bad of [...BAD_URLS, 'example.com', '//example.com', '', null, undefined]) {
      expect(httpUrl(bad), String(bad)).toBeNull();
    }
    expect(httpUrl(`https://example.com/${'a'.repeat(600)}`)).toBeNull();
  });

  it('userMention mentions only IDs', () => {
    expect(userMention('585766846268047370')).toBe('<@585766846268047370>');
    expect(userMention('@everyone')).toBe('@\u200beveryone');
    expect(userMention('<@&123>')).not.toContain('<@&');
    expect(userMention(null)).toBe('');
  });

  it('directoryMarkdown keeps markdown, turns shortcodes into emoji and breaks mentions', () => {
    expect(directoryMarkdown(':white_check_mark: **2 UP**!', 100)).toBe('✅ **2 UP**!');
    expect(directoryMarkdown(':unknown::x: 10:30:00', 100)).toBe(':unknown:❌ 10:30:00');
    expect(directoryMarkdown('@everyone <@&1> <@2>', 100)).not.toMatch(/@everyone|<@/);
    expect(directoryMarkdown(`a${RLO}b`, 100)).toBe('ab');
  });
});

describe('components', () => {
  it('linkButton refuses every URL that is not http(s)', () => {
    for (const bad of BAD_URLS) expect(linkButton('x', bad), bad).toBeNull();
    expect(linkButton('x', null)).toBeNull();
    expect(linkButton('Site', 'https://kerdoku.top')).toEqual({
      type: ComponentType.Button,
      style: ButtonStyle.Link,
      label: 'Site',
      url: 'https://kerdoku.top/',
    });
    expect(linkButton('l'.repeat(200), 'https://a.example')?.label).toHaveLength(80);
  });

  it('actionButton refuses a custom_id over 100 characters', () => {
    expect(() => actionButton('x', 'a'.repeat(101))).toThrow(RangeError);
    expect(actionButton('x', 'a'.repeat(100)).custom_id).toHaveLength(100);
  });

  it('rows packs five a row, five rows at most, and drops nulls', () => {
    const many = Array.from({ length: 30 }, (_, i) => actionButton(`b${i}`, `id${i}`));
    const packed = rows([null, ...many, null]);
    expect(packed).toHaveLength(5);
    expect(packed.every((r) => r.components.length === 5)).toBe(true);
    expect(rows([null, null])).toEqual([]);
    expect(rows(many.slice(0, 7)).map((r) => r.components.length)).toEqual([5, 2]);
  });
});

describe('fitEmbed', () => {
  it("knows Discord's limits", () => {
    expect(LIMITS).toEqual({
      title: 256,
      description: 4096,
      fields: 25,
      fieldName: 256,
      fieldValue: 1024,
      footer: 2048,
      author: 256,
      total: 6000,
      buttonsPerRow: 5,
      rows: 5,
      buttonLabel: 80,
      customId: 100,
    });
  });

  it('holds every limit for an oversized embed, trimming the description first', () => {
    const embed: APIEmbed = {
      title: 't'.repeat(400),
      description: 'd'.repeat(5000),
      footer: { text: 'f'.repeat(3000) },
      author: { name: 'a'.repeat(300) },
      fields: Array.from({ length: 40 }, (_, i) => ({ name: `n${i}`.repeat(200), value: 'v'.repeat(2000) })),
    };
    const out = fitEmbed(embed);
    expect(out.title).toHaveLength(256);
    expect(out.footer?.text).toHaveLength(2048);
    expect(out.author?.name).toHaveLength(256);
    expect(out.fields?.length ?? 0).toBeLessThanOrEqual(25);
    for (const f of out.fields ?? []) {
      expect(f.name.length).toBeLessThanOrEqual(256);
      expect(f.value.length).toBeLessThanOrEqual(1024);
    }
    expect(embedTotal(out)).toBeLessThanOrEqual(6000);
  });

  it('trims the description before dropping fields, and drops empty parts', () => {
    const out = fitEmbed({
      title: '',
      description: 'd'.repeat(4096),
      fields: [
        { name: 'a', value: 'v'.repeat(1000) },
        { name: 'b', value: 'v'.repeat(1000) },
        { name: ' ', value: 'x' },
        { name: 'c', value: '  ' },
      ],
    });
    expect(out.title).toBeUndefined();
    expect(out.fields?.map((f) => f.name)).toEqual(['a', 'b']);
    expect(embedTotal(out)).toBe(6000);
    expect(out.description?.endsWith('…')).toBe(true);
    expect(fitEmbed({ description: '' }).description).toBeUndefined();
    expect(fitEmbed({ title: 'x' }).fields).toBeUndefined();
  });

  it('leaves a small embed as it was', () => {
    const embed: APIEmbed = {
      title: 'T',
      description: 'D',
      fields: [{ name: 'n', value: 'v', inline: true }],
    };
    expect(fitEmbed(embed)).toEqual(embed);
  });
});

describe('bot card', () => {
  it('renders the real sample', () => {
    const msg = renderBotCard(realBot(), en, 'en-US');
    expectWithinLimits(msg);
    expectNoPing(msg, ['585766846268047370']);
    const [embed] = msg.embeds;
    expect(embed?.title).toBe('Bot kerdoku');
    expect(embed?.color).toBe(COLORS.info);
    expect(embed?.description).toBe('Удобный и дружелюбный бот, который имеет крутой функционал!\n\nwow');
    expect(embed?.footer?.text).toBe('724663360934772797 · kerdoku');
    expect(embed?.thumbnail).toBeUndefined();
    expect(fieldValue(msg, 'Prefix')).toBe('`?`');
    expect(fieldValue(msg, 'Library')).toBe('discordpy');
    expect(fieldValue(msg, 'Ups')).toBe('37');
    expect(fieldValue(msg, 'Statistics')).toBe('2,558 servers\n3 shards\n348,986 users');
    expect(fieldValue(msg, 'Status')).toBe('APPROVED');
    expect(fieldValue(msg, 'Developers')).toBe('<@585766846268047370>');
    expect(fieldValue(msg, 'Tags')).toBe('`комбайн` `экономика` `модерация` `приветствия`');
    // badge is null and `added` (1091) is a count, not a time
    expect(fieldValue(msg, 'Badge')).toBeUndefined();
    expect(fieldValue(msg, 'Added')).toBeUndefined();
    expect(linkButtons(msg)).toEqual([
      { label: 'Site', url: 'https://kerdoku.top/' },
      { label: 'Support server', url: 'https://discord.gg/5qXgJvr' },
      { label: 'Directory page', url: 'https://boticord.top/bot/724663360934772797' },
    ]);
    const [comments] = customIdButtons(msg);
    expect(comments?.label).toBe('Comments');
    expect(decodeComments(comments?.customId ?? '')).toEqual({
      mode: 'open',
      kind: 'bot',
      id: '724663360934772797',
      page: 0,
    });
    expect(msg.components).toHaveLength(1);
  });

  it('renders the real sample in Russian with the Discord identity', () => {
    const msg = renderBotCard(realBot(), ru, 'ru', {
      name: 'Kerdoku',
      avatarUrl: 'https://cdn.discordapp.com/avatars/724663360934772797/abc.png',
    });
    expectWithinLimits(msg);
    expect(msg.embeds[0]?.title).toBe('Бот Kerdoku');
    expect(msg.embeds[0]?.thumbnail?.url).toBe(
      'https://cdn.discordapp.com/avatars/724663360934772797/abc.png',
    );
    expect(spaces(fieldValue(msg, 'Статистика') ?? '')).toBe(
      '2 558 серверов\n3 шарда\n348 986 пользователей',
    );
    expect(fieldValue(msg, 'Префикс')).toBe('`?`');
    expect(linkButtons(msg).map((b) => b.label)).toEqual(['Сайт', 'Сервер поддержки', 'Страница в каталоге']);
    expect(customIdButtons(msg).map((b) => b.label)).toEqual(['Отзывы']);
  });

  it('shows a GitHub button, a time for `added`, and no thumbnail for a non-http avatar', () => {
    const bot: DirectoryBot = {
      ...realBot(),
      added: 1_650_181_977_858,
      badge: 'STAFF',
      links: { discord: 'https://discord.gg/abc', github: 'https://github.com/x/y', site: null },
    };
    const msg = renderBotCard(bot, en, 'en-US', { name: 'K', avatarUrl: 'javascript:alert(1)' });
    expect(fieldValue(msg, 'Added')).toBe('<t:1650181977:D>');
    expect(fieldValue(msg, 'Badge')).toBe('STAFF');
    expect(msg.embeds[0]?.thumbnail).toBeUndefined();
    expect(linkButtons(msg).map((b) => b.url)).toEqual([
      'https://github.com/x/y',
      'https://discord.gg/abc',
      'https://boticord.top/bot/724663360934772797',
    ]);
  });

  it('shows a prefix with markdown characters as typed', () => {
    const msg = renderBotCard({ ...realBot(), prefix: '*_' }, en, 'en-US');
    expect(fieldValue(msg, 'Prefix')).toBe('`*_`');
  });

  it('omits empty descriptions without a leading gap', () => {
    const long = renderBotCard({ ...realBot(), shortDescription: null }, en, 'en-US');
    expect(long.embeds[0]?.description).toBe('wow');
    const none = renderBotCard({ ...realBot(), shortDescription: null, longDescription: null }, en, 'en-US');
    expect(none.embeds[0]?.description).toBeUndefined();
    expectWithinLimits(none);
  });

  it('survives a hostile record', () => {
    const developers = [
      ...Array.from({ length: 48 }, (_, i) => snowflake(i)),
      '@everyone',
      '<@&123456789012345678>',
    ];
    const huge = `${HOSTILE_NAME}${RLO}${CONTROLS}\n# head\n${'x'.repeat(10_000)}`;
    const bot: DirectoryBot = {
      ...realBot(),
      id: '724663360934772797',
      shortCode: HOSTILE_NAME,
      pageLinks: ['javascript:alert(1)', 'https://boticord.top/bot/724663360934772797'],
      prefix: `\`${HOSTILE_NAME}\``,
      library: HOSTILE_NAME,
      status: '@here',
      badge: '<@&123>',
      tags: Array.from({ length: 100 }, (_, i) => `${HOSTILE_NAME} ${RLO}${i}`),
      developers,
      links: { discord: 'ftp://example.com', github: 'data:text/html,<b>x</b>', site: 'javascript:alert(1)' },
      shortDescription: huge,
      longDescription: `${'😀'.repeat(5000)}`,
      stats: { servers: 1e15, shards: 1e6, users: 1e15 },
      bumps: Number.MAX_SAFE_INTEGER,
    };
    for (const [t, locale] of [
      [en, 'en-US'],
      [ru, 'ru'],
    ] as const) {
      const msg = renderBotCard(bot, t, locale, {
        name: HOSTILE_NAME,
        avatarUrl: 'data:image/png;base64,AA',
      });
      expectWithinLimits(msg);
      expectNoPing(msg, developers.slice(0, 10));
      const embed = msg.embeds[0];
      expect(embed?.title).toContain('\\*\\*bold\\*\\*');
      expect(embed?.title).toContain('\\[x\\]');
      expect(embed?.footer?.text).not.toContain('@everyone');
      expect(embed?.thumbnail).toBeUndefined();
      expect(linkButtons(msg)).toEqual([
        { label: t('common.directoryPage'), url: 'https://boticord.top/bot/724663360934772797' },
      ]);
      expect(customIdButtons(msg)).toHaveLength(1);
    }
    const msg = renderBotCard(bot, en, 'en-US');
    const devs = fieldValue(msg, 'Developers') ?? '';
    expect(devs.match(/<@\d+>/g)).toHaveLength(10);
    expect(devs.endsWith('and 40 more')).toBe(true);
    const tags = fieldValue(msg, 'Tags') ?? '';
    expect(tags.endsWith('and 80 more')).toBe(true);
    expect(tags).not.toContain(RLO);
    expect(fieldValue(msg, 'Status')).toBe('@\u200bhere');
    expect(fieldValue(msg, 'Prefix')?.startsWith('`ˋ@\u200beveryone')).toBe(true);
  });

  it('has no comments button when the ID cannot travel in a custom_id', () => {
    const msg = renderBotCard({ ...realBot(), id: 'x'.repeat(200) }, en, 'en-US');
    expectWithinLimits(msg);
    expect(customIdButtons(msg)).toEqual([]);
  });
});

describe('server card', () => {
  it('renders the real sample', () => {
    const msg = renderServerCard(realServer(), en, 'en-US');
    expectWithinLimits(msg);
    expectNoPing(msg);
    const [embed] = msg.embeds;
    expect(embed?.title).toBe('Server BotiCord Community');
    expect(embed?.description).toBe('short text\n\nlong text');
    expect(embed?.thumbnail?.url).toBe(
      'https://cdn.discordapp.com/icons/722424773233213460/060188f770836697846710b109272e4c.webp',
    );
    expect(embed?.footer?.text).toBe('722424773233213460 · boticord');
    expect(fieldValue(msg, 'Members')).toBe('438 members · 0 online');
    expect(fieldValue(msg, 'Ups')).toBe('62');
    expect(fieldValue(msg, 'Status')).toBe('ACCEPT\\_MEMBERS');
    expect(fieldValue(msg, 'Badge')).toBe('STAFF');
    expect(fieldValue(msg, 'Owner')).toBeUndefined();
    expect(fieldValue(msg, 'Links')).toBeUndefined();
    expect(fieldValue(msg, 'Tags')).toBe(
      '`аниме` `игры` `поддержка` `комьюнити` `сообщество` `discord` `дискорд сервера` `дискорд боты`',
    );
    expect(linkButtons(msg)).toEqual([
      { label: 'Join', url: 'https://discord.gg/hkHjW8a' },
      { label: 'Directory page', url: 'https://boticord.top/server/722424773233213460' },
      { label: 'Site', url: 'https://boticord.top/' },
    ]);
    const [comments] = customIdButtons(msg);
    expect(decodeComments(comments?.customId ?? '')).toEqual({
      mode: 'open',
      kind: 'server',
      id: '722424773233213460',
      page: 0,
    });
  });

  it('renders the real sample in Russian, with plural forms of members', () => {
    const server = realServer();
    const msg = renderServerCard(server, ru, 'ru');
    expect(fieldValue(msg, 'Участники')).toBe('438 участников · 0 в сети');
    const one = renderServerCard({ ...server, members: { all: 21, online: 2 } }, ru, 'ru');
    expect(fieldValue(one, 'Участники')).toBe('21 участник · 2 в сети');
    const few = renderServerCard({ ...server, members: { all: 2, online: null } }, ru, 'ru');
    expect(fieldValue(few, 'Участники')).toBe('2 участника');
    const none = renderServerCard({ ...server, members: { all: null, online: null } }, en, 'en-US');
    expect(fieldValue(none, 'Members')).toBeUndefined();
  });

  it('shows the owner as a mention when it is an ID and as text otherwise', () => {
    const id = renderServerCard({ ...realServer(), owner: '585766846268047370' }, en, 'en-US');
    expect(fieldValue(id, 'Owner')).toBe('<@585766846268047370>');
    const tag = renderServerCard({ ...realServer(), owner: 'cipherka#8404' }, en, 'en-US');
    expect(fieldValue(tag, 'Owner')).toBe('cipherka#8404');
  });

  it('survives a hostile record', () => {
    const server: DirectoryServer = {
      ...realServer(),
      name: `${HOSTILE_NAME}${RLO}${'n'.repeat(500)}`,
      shortCode: '@everyone',
      avatar: 'javascript:alert(1)',
      owner: '@everyone',
      status: `<@&1>${CONTROLS}`,
      badge: '',
      tags: Array.from({ length: 100 }, () => HOSTILE_NAME),
      pageLinks: ['data:text/html,x', 'ftp://example.com'],
      links: {
        invite: 'javascript:alert(1)',
        site: 'data:text/html;base64,AAAA',
        youtube: 'ftp://example.com/x',
        twitch: 'http://twitch.tv/example',
        steam: 'steam://open/x',
        vk: `vk.com/hostile @everyone ${RLO}`,
      },
      shortDescription: `${'s'.repeat(9_999)}😀`,
      longDescription: `@here\n${'l'.repeat(10_000)}`,
      members: { all: 1e12, online: 1e12 },
    };
    const msg = renderServerCard(server, en, 'en-US');
    expectWithinLimits(msg);
    expectNoPing(msg);
    expect(msg.embeds[0]?.thumbnail).toBeUndefined();
    expect(msg.embeds[0]?.title?.length).toBeLessThanOrEqual(256);
    expect(linkButtons(msg)).toEqual([{ label: 'Twitch', url: 'http://twitch.tv/example' }]);
    expect(fieldValue(msg, 'Links')).toBe('VK: vk.com/hostile @\u200beveryone');
    expect(fieldValue(msg, 'Owner')).toBe('@\u200beveryone');
    expect(fieldValue(msg, 'Badge')).toBeUndefined();
  });
});

describe('profile card', () => {
  const bots = () => botReferenceListSchema.parse(sample('developer-bots.json'));

  it('renders the real sample with its bots', () => {
    const msg = renderProfileCard(realProfile(), bots(), en);
    expectWithinLimits(msg);
    expectNoPing(msg, ['672406367344132116']);
    const [embed] = msg.embeds;
    expect(embed?.title).toBe('Profile of cipherka');
    expect(embed?.description).toBe(
      '> "Если вы не разделяете мою точку зрения, поздравляю — вам больше достанется." © Артемий Лебедев',
    );
    expect(embed?.footer?.text).toBe('178404926869733376');
    expect(fieldValue(msg, 'Badge')).toBe('STAFF');
    expect(fieldValue(msg, 'Short code')).toBe('`cipherka`');
    // steam holds a handle, not a URL: it is shown as text, never as a button
    expect(fieldValue(msg, 'Links')).toBe('Steam: sadlycipherka');
    expect(fieldValue(msg, 'Bots')).toBe('<@672406367344132116> · `sonata`');
    expect(linkButtons(msg)).toEqual([
      { label: 'Site', url: 'https://sqdsh.top/' },
      { label: 'Git', url: 'https://git.sqdsh.top/me' },
    ]);
    const [comments] = customIdButtons(msg);
    expect(decodeComments(comments?.customId ?? '')).toEqual({
      mode: 'open',
      kind: 'profile',
      id: '178404926869733376',
      page: 0,
    });
  });

  it('handles unknown and empty bot lists, the identity, and Russian', () => {
    expect(fieldValue(renderProfileCard(realProfile(), null, en), 'Bots')).toBeUndefined();
    expect(fieldValue(renderProfileCard(realProfile(), [], en), 'Bots')).toBe('No bots in the directory.');
    const msg = renderProfileCard(realProfile(), [], ru, {
      name: 'cipherka_',
      avatarUrl: 'https://cdn.discordapp.com/avatars/1/2.png',
    });
    expect(msg.embeds[0]?.title).toBe('Профиль cipherka\\_');
    expect(msg.embeds[0]?.thumbnail?.url).toBe('https://cdn.discordapp.com/avatars/1/2.png');
    expect(fieldValue(msg, 'Боты')).toBe('Ботов в каталоге нет.');
    expect(fieldValue(msg, 'Ссылки')).toBe('Steam: sadlycipherka');
    expect(linkButtons(msg).map((b) => b.label)).toEqual(['Сайт', 'Git']);
  });

  it('makes buttons of http(s) links only', () => {
    const profile: DirectoryProfile = {
      ...realProfile(),
      site: 'javascript:alert(1)',
      vk: 'https://vk.com/example',
      steam: 'https://steamcommunity.com/id/example',
      youtube: 'data:text/html,<script>',
      twitch: 'ftp://example.com',
      git: 'http://git.example.com',
    };
    const msg = renderProfileCard(profile, null, en);
    expectWithinLimits(msg);
    expect(linkButtons(msg)).toEqual([
      { label: 'VK', url: 'https://vk.com/example' },
      { label: 'Steam', url: 'https://steamcommunity.com/id/example' },
      { label: 'Git', url: 'http://git.example.com/' },
    ]);
    // a URL of another scheme is neither a button nor text
    expect(fieldValue(msg, 'Links')).toBeUndefined();
  });

  it('survives a hostile record', () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ id: snowflake(i), shortCode: HOSTILE_NAME }));
    const profile: DirectoryProfile = {
      id: '178404926869733376',
      status: `${HOSTILE_NAME}\n${'>\n'.repeat(3000)}${RLO}${'q'.repeat(10_000)}`,
      badge: '@everyone',
      shortCode: `${HOSTILE_NAME}${'😀'.repeat(40)}`,
      site: 'javascript:alert(1)',
      vk: `<@&1> ${'v'.repeat(500)}`,
      steam: `@everyone ${CONTROLS}`,
      youtube: 'data:,x',
      twitch: 'ftp://x',
      git: null,
    };
    const msg = renderProfileCard(profile, many, en, { name: HOSTILE_NAME });
    expectWithinLimits(msg);
    expectNoPing(
      msg,
      many.slice(0, 20).map((b) => b.id),
    );
    expect(linkButtons(msg)).toEqual([]);
    // as many bots as fit in the field, then how many more there are
    const botsField = fieldValue(msg, 'Bots') ?? '';
    const shown = botsField.match(/^<@\d+>/gm)?.length ?? 0;
    expect(shown).toBeGreaterThan(5);
    expect(shown).toBeLessThanOrEqual(20);
    expect(botsField.endsWith(`\nand ${50 - shown} more`)).toBe(true);
    expect(fieldValue(msg, 'Links')).toContain('Steam: @\u200beveryone');
  });
});

describe('up result', () => {
  const successSample = sample('server-up-response.json');
  const cooldownSample = sample('server-up-cooldown-response.json');
  // The success sample's next up is an epoch time: 2022-01-07T21:00:30.690Z.
  const EPOCH_NEXT = 1_641_589_230_690;
  const epochReceived = EPOCH_NEXT - 4 * 3_600_000;
  const durationReceived = 1_700_000_000_000;

  const success = (): ServerUpResult => serverUpSchema(epochReceived).parse(successSample);
  const cooldown = (): ServerUpResult => serverUpSchema(durationReceived).parse(cooldownSample);

  it('success (epoch sample): green, public text as given, bumps, boost, next up', () => {
    const result = success();
    expect(upOutcome(result)).toBe('success');
    const msg = renderUpResult(result, en, epochReceived);
    expectWithinLimits(msg);
    expectNoPing(msg);
    const [embed] = msg.embeds;
    expect(embed?.color).toBe(COLORS.success);
    expect(embed?.title).toBe('⬆️ Server raised');
    expect(embed?.description).toBe(
      '✅ Серверу было успешно добавлено **2 UP**!\n\nℹ️Вы также можете оставить отзыв о сервере!\n' +
        '> https://myservers.me/s/boticord',
    );
    expect(fieldValue(msg, 'Ups')).toBe('2');
    expect(fieldValue(msg, 'Boost')).toBe('Yes');
    const unix = Math.floor(EPOCH_NEXT / 1000);
    expect(fieldValue(msg, 'Next up')).toBe(`<t:${unix}:R> (<t:${unix}:f>)`);
    expect(msg.components).toEqual([]);
  });

  it('cooldown (duration sample): yellow, next up counted from the receive time', () => {
    const result = cooldown();
    expect(upOutcome(result)).toBe('cooldown');
    const msg = renderUpResult(result, en, durationReceived);
    expectWithinLimits(msg);
    const [embed] = msg.embeds;
    expect(embed?.color).toBe(COLORS.cooldown);
    expect(embed?.title).toBe('⏳ Not yet');
    expect(embed?.description).toBe(
      '❌ Сервер пока нельзя поднять! Следующий **UP** будет доступен через **3 ч. 59 мин. 55 сек.**',
    );
    expect(fieldValue(msg, 'Ups')).toBe('63');
    expect(fieldValue(msg, 'Boost')).toBe('No');
    const unix = Math.floor((durationReceived + 14_395_000) / 1000);
    expect(fieldValue(msg, 'Next up')).toBe(`<t:${unix}:R> (<t:${unix}:f>)`);
  });

  it('updated: false has its own look', () => {
    const result = serverUpSchema(durationReceived).parse({
      ...(cooldownSample as Record<string, unknown>),
      updated: false,
    });
    expect(upOutcome(result)).toBe('notUpdated');
    const msg = renderUpResult(result, ru, durationReceived);
    expectWithinLimits(msg);
    expect(msg.embeds[0]?.color).toBe(COLORS.warning);
    expect(msg.embeds[0]?.title).toBe('⚠️ Каталог не обновил сервер');
    expect(fieldValue(msg, 'Буст')).toBe('Нет');
  });

  it('the three looks differ in color and title', () => {
    const results = [success(), cooldown(), { ...cooldown(), updated: false }];
    const embeds = results.map((r) => renderUpResult(r, en, durationReceived).embeds[0]);
    expect(new Set(embeds.map((e) => e?.color)).size).toBe(3);
    expect(new Set(embeds.map((e) => e?.title)).size).toBe(3);
  });

  it('says "now" for a next up in the past and leaves the field out when unknown', () => {
    const past = renderUpResult(success(), en, EPOCH_NEXT + 1);
    expect(fieldValue(past, 'Next up')).toBe('now');
    expect(fieldValue(renderUpResult(success(), ru, EPOCH_NEXT + 1), 'Следующий ап')).toBe('сейчас');
    const none = renderUpResult({ ...success(), nextUpAt: null }, en, 0);
    expect(fieldValue(none, 'Next up')).toBeUndefined();
    expect(nextUpText(null, 0, en)).toBeNull();
  });

  it('keeps a hostile message within limits and mention-free', () => {
    const result: ServerUpResult = {
      ...success(),
      message: `@everyone <@&123> <@585766846268047370> ${RLO}${CONTROLS}:tada:${'😀'.repeat(3000)}`,
    };
    const msg = renderUpResult(result, en, epochReceived);
    expectWithinLimits(msg);
    expectNoPing(msg);
    expect(msg.embeds[0]?.description?.startsWith('@\u200beveryone <\u200b@&123> <\u200b@5857')).toBe(true);
    expect(msg.embeds[0]?.description).toContain('🎉');
  });

  it('leaves out an empty message', () => {
    const msg = renderUpResult({ ...success(), message: '' }, en, epochReceived);
    expect(msg.embeds[0]?.description).toBeUndefined();
    expectWithinLimits(msg);
  });
});

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
    const [embed] = msg.embeds;
    expect(embed?.title).toBe('Comments on bot kerdoku');
    expect(embed?.description).toBe(
      '👍 <@525366699969478676> · <t:1644388399:R>\n> aboba\n\n' +
        '👍 <@178404926869733376> · <t:1650183132:R> · edited\n> Отличный бот, пользуюсь каждый день!',
    );
    expect(embed?.footer?.text).toBe('Page 1 of 1 · 2 comments');
    expect(msg.components).toEqual([]);
  });

  it('renders the server comments with each vote icon', () => {
    const list = commentListSchema.parse(sample('server-comments.json'));
    const msg = renderCommentsPage('server', '722424773233213460', 'BotiCord Community', list, 0, ru);
    const description = msg.embeds[0]?.description ?? '';
    expect(description).toContain('👎 <@525366699969478676> · <t:1650190000:R> · изменён');
    expect(msg.embeds[0]?.title).toBe('Отзывы о сервере BotiCord Community');
    expect(msg.embeds[0]?.footer?.text).toBe('Страница 1 из 1 · 3 отзыва');
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
    expect(first.embeds[0]?.footer?.text).toBe('Page 1 of 3 · 12 comments');
    expect(first.embeds[0]?.description).toContain('comment 0');
    expect(first.embeds[0]?.description).toContain('comment 4');
    expect(first.embeds[0]?.description).not.toContain('comment 5');
    expect(first.embeds[0]?.description?.startsWith('👍 <@')).toBe(true);
    expect(decodedButtons(first)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 0 }, disabled: true },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 1 }, disabled: false },
    ]);
    expect(customIdButtons(first).map((b) => b.label)).toEqual(['Previous', 'Next']);

    const middle = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 1, en);
    expectWithinLimits(middle);
    expect(middle.embeds[0]?.footer?.text).toBe('Page 2 of 3 · 12 comments');
    expect(middle.embeds[0]?.description).toContain('comment 5');
    expect(decodedButtons(middle)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 0 }, disabled: false },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 2 }, disabled: false },
    ]);

    const last = renderCommentsPage('bot', BOT_ID, 'kerdoku', list, 2, en);
    expectWithinLimits(last);
    expect(last.embeds[0]?.footer?.text).toBe('Page 3 of 3 · 12 comments');
    expect(last.embeds[0]?.description?.split('\n\n')).toHaveLength(2);
    expect(decodedButtons(last)).toEqual([
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 1 }, disabled: false },
      { state: { mode: 'page', kind: 'bot', id: BOT_ID, page: 2 }, disabled: true },
    ]);
  });

  it('clamps pages out of range', () => {
    const list = comments(12);
    const footer = (page: number) =>
      renderCommentsPage('server', BOT_ID, 's', list, page, en).embeds[0]?.footer?.text;
    expect(footer(99)).toBe('Page 3 of 3 · 12 comments');
    expect(footer(-5)).toBe('Page 1 of 3 · 12 comments');
    expect(footer(Number.NaN)).toBe('Page 1 of 3 · 12 comments');
    expect(footer(1.7)).toBe('Page 2 of 3 · 12 comments');
  });

  it('Russian footers use the right plural', () => {
    const footer = (n: number) =>
      renderCommentsPage('bot', BOT_ID, 'k', comments(n), 0, ru).embeds[0]?.footer?.text ?? '';
    expect(footer(1)).toBe('Страница 1 из 1 · 1 отзыв');
    expect(footer(2)).toBe('Страница 1 из 1 · 2 отзыва');
    expect(footer(5)).toBe('Страница 1 из 1 · 5 отзывов');
    expect(footer(11)).toBe('Страница 1 из 3 · 11 отзывов');
    expect(footer(21)).toBe('Страница 1 из 5 · 21 отзыв');
  });

  it('an empty list says so and has no buttons', () => {
    const msg = renderCommentsPage('profile', BOT_ID, 'x', [], 0, en);
    expect(msg.embeds[0]?.description).toBe('No comments yet.');
    expect(msg.embeds[0]?.footer?.text).toBe('Page 1 of 1 · 0 comments');
    expect(msg.embeds[0]?.title).toBe('Comments by x');
    expect(msg.components).toEqual([]);
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
    expect(msg.embeds[0]?.description?.match(/^👍 /gm)).toHaveLength(5);
  });

  it('has no page buttons when the ID cannot travel in a custom_id', () => {
    const msg = renderCommentsPage('bot', 'not-an-id', 'x', comments(12), 0, en);
    expectWithinLimits(msg);
    expect(msg.components).toEqual([]);
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
    expect(msg.embeds[0]?.description).toContain('· edited · on a bot');
    expect(msg.embeds[0]?.description).toContain('· on a server');
  });
});

describe('comments custom_id', () => {
  const ID = '724663360934772797';

  it('round-trips every mode and kind', () => {
    for (const mode of ['open', 'page'] as const) {
      for (const kind of ['bot', 'server', 'profile'] as const) {
        for (const page of [0, 1, 42, 9999]) {
          const state: CommentsState = { mode, kind, id: ID, page };
          const encoded = encodeComments(state);
          expect(encoded.length).toBeLessThanOrEqual(100);
          expect(isCommentsId(encoded)).toBe(true);
          expect(decodeComments(encoded)).toEqual(state);
          expect(commentsCustomId(state)).toBe(encoded);
        }
      }
    }
    expect(encodeComments({ mode: 'page', kind: 'server', id: ID, page: 3 })).toBe(`comments:p:s:${ID}:3`);
    expect(decodeComments(`comments:o:p:${'9'.repeat(20)}:0`)?.id).toBe('9'.repeat(20));
  });

  it('rejects malformed IDs', () => {
    for (const bad of [
      '',
      'comments',
      `comments:p:b:${ID}`,
      `comments:p:b:${ID}:1:2`,
      `comments:p:b:${ID}:1:`,
      `comments:p:b:${ID}:${'1'.repeat(100)}`,
      `comments:p:b:${'1'.repeat(90)}:1`,
      `comments:x:b:${ID}:1`,
      `comments:p:x:${ID}:1`,
      `comments:p:bot:${ID}:1`,
      `comment:p:b:${ID}:1`,
      `other:p:b:${ID}:1`,
      `comments:p:b:kerdoku:1`,
      `comments:p:b:${ID}:one`,
      `comments:p:b:${ID}:-1`,
      `comments:p:b:${ID}:1.5`,
      `comments:p:b:${ID}:01`,
      `comments:p:b:${ID}:10000`,
      `comments:p:b:1234567890123456:1`,
      `comments:p:b:${ID}0000:1`,
      ` comments:p:b:${ID}:1`,
      `comments:p:b:${ID}:1\n`,
      `comments:p:b:${ID}:1 `,
      `COMMENTS:P:B:${ID}:1`,
    ]) {
      expect(decodeComments(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(isCommentsId('other:1')).toBe(false);
  });

  it('commentsCustomId refuses states that would not decode back', () => {
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: -1 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: 10_000 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: 1.5 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: 'kerdoku', page: 0 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: 'x'.repeat(200), page: 0 })).toBeNull();
  });
});

describe('small helpers', () => {
  it('formatNumber follows the locale', () => {
    expect(formatNumber(348_986, 'en-US')).toBe('348,986');
    expect(formatNumber(348_986, 'en-GB')).toBe('348,986');
    expect(spaces(formatNumber(348_986, 'ru'))).toBe('348 986');
  });

  it('inviteUrl turns codes and invite links into https://discord.gg/ links and refuses the rest', () => {
    expect(inviteUrl('5qXgJvr')).toBe('https://discord.gg/5qXgJvr');
    expect(inviteUrl('discord.gg/5qXgJvr')).toBe('https://discord.gg/5qXgJvr');
    expect(inviteUrl('https://discord.com/invite/5qXgJvr')).toBe('https://discord.gg/5qXgJvr');
    expect(inviteUrl('https://example.com/x')).toBe('https://example.com/x');
    expect(inviteUrl('javascript:alert(1)')).toBeNull();
    expect(inviteUrl('a b')).toBeNull();
    expect(inviteUrl(null)).toBeNull();
  });
});

import { ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { botReferenceListSchema } from '../../../src/directory/schemas.js';
import type { DirectoryBot, DirectoryProfile, DirectoryServer } from '../../../src/directory/types.js';
import {
  formatNumber,
  inviteUrl,
  renderBotCard,
  renderProfileCard,
  renderServerCard,
} from '../../../src/render/cards.js';
import { COLORS } from '../../../src/render/colors.js';
import { decodeComments } from '../../../src/render/custom-id.js';
import { directorySample as sample } from '../../support/samples.js';
import {
  BIDI_MARKS,
  CONTROLS,
  customIdButtons,
  en,
  expectNoPing,
  expectWithinLimits,
  fieldValue,
  HOSTILE_NAME,
  linkButtons,
  RLO,
  realBot,
  realProfile,
  realServer,
  ru,
  snowflake,
  spaces,
  view,
} from './helpers.js';

describe('bot card', () => {
  it('renders the real sample', () => {
    const msg = renderBotCard(realBot(), en, 'en-US');
    expectWithinLimits(msg);
    expectNoPing(msg, ['585766846268047370']);
    const embed = view(msg);
    expect(embed.title).toBe('Bot kerdoku');
    expect(embed.kind).toBe('layout');
    // APPROVED: the green of a bot the directory took
    expect(embed.color).toBe(COLORS.success);
    expect(embed.description).toBe('Удобный и дружелюбный бот, который имеет крутой функционал!\n\nwow');
    expect(embed.footer).toBe('724663360934772797 · kerdoku');
    expect(embed.thumbnail).toBeUndefined();
    expect(fieldValue(msg, 'Prefix')).toBe('`?`');
    expect(fieldValue(msg, 'Library')).toBe('discordpy');
    expect(fieldValue(msg, 'Ups')).toBe('37');
    expect(fieldValue(msg, 'Statistics')).toBe('2,558 servers · 3 shards · 348,986 users');
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
    expect(view(msg).rows).toHaveLength(1);
  });

  it('renders the real sample in Russian with the Discord identity', () => {
    const msg = renderBotCard(realBot(), ru, 'ru', {
      name: 'Kerdoku',
      avatarUrl: 'https://cdn.discordapp.com/avatars/724663360934772797/abc.png',
    });
    expectWithinLimits(msg);
    expect(view(msg).title).toBe('Бот Kerdoku');
    expect(view(msg).thumbnail?.url).toBe('https://cdn.discordapp.com/avatars/724663360934772797/abc.png');
    expect(spaces(fieldValue(msg, 'Статистика') ?? '')).toBe(
      '2 558 серверов · 3 шарда · 348 986 пользователей',
    );
    expect(fieldValue(msg, 'Префикс')).toBe('`?`');
    expect(linkButtons(msg).map((b) => b.label)).toEqual(['Сайт', 'Сервер поддержки', 'Страница в каталоге']);
    expect(customIdButtons(msg).map((b) => b.label)).toEqual(['Отзывы']);
  });

  it('lays the card out in one container: the avatar beside the title, buttons inside, nothing outside', () => {
    const msg = renderBotCard(realBot(), ru, 'ru', {
      name: 'Kerdoku',
      avatarUrl: 'https://cdn.discordapp.com/avatars/724663360934772797/abc.png',
    });
    expect(msg.layout).toHaveLength(1);
    const [card] = msg.layout;
    expect(card?.type).toBe(ComponentType.Container);
    if (card?.type !== ComponentType.Container) return;
    const [head] = card.components;
    expect(head).toMatchObject({
      type: ComponentType.Section,
      components: [
        { type: ComponentType.TextDisplay, content: '### Бот Kerdoku' },
        {
          type: ComponentType.TextDisplay,
          content: 'Удобный и дружелюбный бот, который имеет крутой функционал!',
        },
      ],
      accessory: {
        type: ComponentType.Thumbnail,
        media: { url: 'https://cdn.discordapp.com/avatars/724663360934772797/abc.png' },
        description: 'Аватар: Kerdoku',
      },
    });
    expect(card.components.at(-1)?.type).toBe(ComponentType.ActionRow);
    expect(view(msg).footer).toBe('724663360934772797 · kerdoku');
    // A bot without an avatar: the title and text stand alone (a section needs an accessory).
    const bare = renderBotCard(realBot(), en, 'en-US');
    const first = bare.layout[0]?.type === ComponentType.Container ? bare.layout[0].components[0] : undefined;
    expect(first).toEqual({ type: ComponentType.TextDisplay, content: '### Bot kerdoku' });
  });

  it('colours the card by the directory status', () => {
    const colour = (status: string | null) =>
      view(renderBotCard({ ...realBot(), status }, en, 'en-US')).color;
    expect(colour('APPROVED')).toBe(COLORS.success);
    expect(colour('PENDING')).toBe(COLORS.cooldown);
    expect(colour('DECLINED')).toBe(COLORS.error);
    expect(colour('BANNED')).toBe(COLORS.error);
    expect(colour(null)).toBe(COLORS.info);
    expect(colour('SOMETHING_NEW')).toBe(COLORS.info);
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
    expect(view(msg).thumbnail).toBeUndefined();
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
    expect(view(long).description).toBe('wow');
    const none = renderBotCard({ ...realBot(), shortDescription: null, longDescription: null }, en, 'en-US');
    expect(view(none).description).toBeUndefined();
    expectWithinLimits(none);
  });

  it('survives a hostile record', () => {
    const developers = [
      ...Array.from({ length: 48 }, (_, i) => snowflake(i)),
      '@everyone',
      '<@&123456789012345678>',
    ];
    const huge = `${HOSTILE_NAME}${RLO}${BIDI_MARKS}${CONTROLS}\n# head\n${'x'.repeat(10_000)}`;
    const bot: DirectoryBot = {
      ...realBot(),
      id: '724663360934772797',
      shortCode: HOSTILE_NAME,
      pageLinks: ['javascript:alert(1)', 'https://boticord.top/bot/724663360934772797'],
      prefix: `\`${HOSTILE_NAME}\``,
      library: HOSTILE_NAME,
      status: '@here',
      badge: '<@&123>',
      tags: Array.from({ length: 100 }, (_, i) => `${HOSTILE_NAME} ${RLO}${BIDI_MARKS}${i}`),
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
      const embed = view(msg);
      expect(embed.title).toContain('\\*\\*bold\\*\\*');
      expect(embed.title).toContain('\\[x\\]');
      expect(embed.footer).not.toContain('@everyone');
      expect(embed.thumbnail).toBeUndefined();
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
    const embed = view(msg);
    expect(embed.title).toBe('Server BotiCord Community');
    expect(embed.description).toBe('short text\n\nlong text');
    expect(embed.thumbnail?.url).toBe(
      'https://cdn.discordapp.com/icons/722424773233213460/060188f770836697846710b109272e4c.webp',
    );
    expect(embed.footer).toBe('722424773233213460 · boticord');
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
    expect(view(msg).thumbnail).toBeUndefined();
    expect(view(msg).title?.length).toBeLessThanOrEqual(256);
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
    const embed = view(msg);
    expect(embed.title).toBe('Profile of cipherka');
    expect(embed.description).toBe(
      '> "Если вы не разделяете мою точку зрения, поздравляю — вам больше достанется." © Артемий Лебедев',
    );
    expect(embed.footer).toBe('178404926869733376');
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
    expect(view(msg).title).toBe('Профиль cipherka\\_');
    expect(view(msg).thumbnail?.url).toBe('https://cdn.discordapp.com/avatars/1/2.png');
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
      name: HOSTILE_NAME,
      avatar: 'javascript:alert(1)',
      description: `${HOSTILE_NAME}${RLO}`,
      badges: ['@everyone', HOSTILE_NAME],
      bots: null,
      servers: null,
      telegram: `<@&1>`,
      donate: 'data:,x',
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

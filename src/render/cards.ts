/**
 * Cards for bots, servers and profiles: pure functions from our directory types to Discord
 * JSON. Every directory string goes through safeText/safeLine; every URL through linkButton.
 */
import { type APIEmbed, type APIEmbedField, TimestampStyles, time } from 'discord.js';
import type { BotReference, DirectoryBot, DirectoryProfile, DirectoryServer } from '../directory/types.js';
import type { Translate } from '../i18n/index.js';
import { COLORS } from './colors.js';
import { actionButton, linkButton, rows } from './components.js';
import { encodeComments } from './custom-id.js';
import { fitEmbed, LIMITS } from './limits.js';
import type { RenderedMessage } from './message.js';
import { httpUrl, safeLine, safeText, userMention } from './text.js';

export interface DiscordIdentity {
  name: string;
  avatarUrl?: string | null;
}

const TAG_LIMIT = 20;

function field(name: string, value: string | null | undefined, inline = true): APIEmbedField | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return { name, value, inline };
}

function present(fields: Array<APIEmbedField | null>): APIEmbedField[] {
  return fields.filter((f): f is APIEmbedField => f !== null);
}

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(locale === 'ru' ? 'ru-RU' : 'en-US').format(value);
}

function tagList(tags: readonly string[]): string {
  const shown = tags.slice(0, TAG_LIMIT).map((tag) => `\`${safeLine(tag, 40).replace(/`/g, 'ˋ')}\``);
  return shown.join(' ') + (tags.length > TAG_LIMIT ? ' …' : '');
}

/** An open string (status, badge) as shown: SCREAMING_CASE stays recognisable, escaped. */
function label(value: string | null): string | null {
  return value ? safeLine(value, 100) : null;
}

/** `information.added` is a time only when it looks like one (the real sample holds a count). */
function addedAt(added: number | null): Date | null {
  if (added === null || added < 1_000_000_000) return null;
  return new Date(added < 100_000_000_000 ? added * 1000 : added);
}

function inviteUrl(value: string | null): string | null {
  if (!value) return null;
  if (/^[A-Za-z0-9-]{2,32}$/.test(value)) return `https://discord.gg/${value}`;
  return httpUrl(value);
}

function pageUrl(pageLinks: readonly string[]): string | null {
  for (const link of pageLinks) {
    const url = httpUrl(link);
    if (url) return url;
  }
  return null;
}

export function renderBotCard(
  bot: DirectoryBot,
  t: Translate,
  locale: string,
  identity?: DiscordIdentity | null,
): RenderedMessage {
  const name = identity?.name ?? bot.shortCode ?? bot.id;
  const added = addedAt(bot.added);
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('bot.title', { name }), LIMITS.title),
    description:
      safeText(bot.shortDescription, 1024) +
      (bot.longDescription ? `\n\n${safeText(bot.longDescription, 2500)}` : ''),
    fields: present([
      field(t('bot.prefix'), bot.prefix ? `\`${safeLine(bot.prefix, 30).replace(/`/g, 'ˋ')}\`` : null),
      field(t('bot.library'), bot.library ? safeLine(bot.library, 100) : null),
      field(t('bot.bumps'), formatNumber(bot.bumps, locale)),
      field(
        t('bot.stats'),
        t('bot.statsValue', {
          servers: t('plural.servers', { count: bot.stats.servers }),
          shards: t('plural.shards', { count: bot.stats.shards }),
          users: t('plural.users', { count: bot.stats.users }),
        }),
      ),
      field(t('bot.status'), label(bot.status)),
      field(t('bot.badge'), label(bot.badge)),
      field(t('bot.added'), added ? time(added, TimestampStyles.LongDate) : null),
      field(
        t('bot.developers'),
        bot.developers
          .slice(0, 10)
          .map((d) => userMention(d))
          .join(', '),
      ),
      field(t('bot.tags'), bot.tags.length > 0 ? tagList(bot.tags) : null, false),
    ]),
    footer: { text: bot.shortCode ? `${bot.id} · ${bot.shortCode}` : bot.id },
  };
  const avatar = httpUrl(identity?.avatarUrl);
  if (avatar) embed.thumbnail = { url: avatar };
  return {
    embeds: [fitEmbed(embed)],
    components: rows([
      linkButton(t('bot.site'), bot.links.site),
      linkButton(t('bot.github'), bot.links.github),
      linkButton(t('bot.support'), inviteUrl(bot.links.discord)),
      linkButton(t('common.directoryPage'), pageUrl(bot.pageLinks)),
      actionButton(t('common.comments'), encodeComments({ mode: 'open', kind: 'bot', id: bot.id, page: 0 })),
    ]),
  };
}

export function renderServerCard(server: DirectoryServer, t: Translate, locale: string): RenderedMessage {
  const { all, online } = server.members;
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('server.title', { name: server.name }), LIMITS.title),
    description:
      safeText(server.shortDescription, 1024) +
      (server.longDescription ? `\n\n${safeText(server.longDescription, 2500)}` : ''),
    fields: present([
      field(
        t('server.members'),
        all === null
          ? null
          : t('server.membersValue', {
              all: t('plural.members', { count: all }),
              online: formatNumber(online ?? 0, locale),
            }),
      ),
      field(t('server.owner'), server.owner ? userMention(server.owner) : null),
      field(t('server.bumps'), formatNumber(server.bumps, locale)),
      field(t('server.status'), label(server.status)),
      field(t('server.badge'), label(server.badge)),
      field(t('server.tags'), server.tags.length > 0 ? tagList(server.tags) : null, false),
    ]),
    footer: { text: server.shortCode ? `${server.id} · ${server.shortCode}` : server.id },
  };
  const avatar = httpUrl(server.avatar);
  if (avatar) embed.thumbnail = { url: avatar };
  const l = server.links;
  return {
    embeds: [fitEmbed(embed)],
    components: rows([
      linkButton(t('server.invite'), inviteUrl(l.invite)),
      linkButton(t('common.directoryPage'), pageUrl(server.pageLinks)),
      linkButton(t('server.site'), l.site),
      linkButton(t('server.youtube'), l.youtube),
      linkButton(t('server.twitch'), l.twitch),
      linkButton(t('server.steam'), l.steam),
      linkButton(t('server.vk'), l.vk),
      actionButton(
        t('common.comments'),
        encodeComments({ mode: 'open', kind: 'server', id: server.id, page: 0 }),
      ),
    ]),
  };
}

const PROFILE_LINKS = ['site', 'vk', 'steam', 'youtube', 'twitch', 'git'] as const;

export function renderProfileCard(
  profile: DirectoryProfile,
  bots: readonly BotReference[] | null,
  t: Translate,
  identity?: DiscordIdentity | null,
): RenderedMessage {
  const name = identity?.name ?? profile.shortCode ?? profile.id;
  // Values that are not URLs (a Steam id, a VK name) are shown as text rather than as buttons.
  const textLinks = PROFILE_LINKS.filter((k) => profile[k] && !httpUrl(profile[k])).map(
    (k) => `${t(`profile.${k}`)}: ${safeLine(profile[k], 100)}`,
  );
  const botLines =
    bots === null
      ? null
      : bots.length === 0
        ? t('profile.noBots')
        : bots
            .slice(0, 20)
            .map((b) => `${userMention(b.id)}${b.shortCode ? ` · \`${safeLine(b.shortCode, 32)}\`` : ''}`)
            .join('\n');
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('profile.title', { name }), LIMITS.title),
    description: profile.status ? `> ${safeText(profile.status, 1500).replace(/\n/g, '\n> ')}` : '',
    fields: present([
      field(t('profile.badge'), label(profile.badge)),
      field(t('profile.shortCode'), profile.shortCode ? `\`${safeLine(profile.shortCode, 32)}\`` : null),
      field(t('profile.links'), textLinks.length > 0 ? textLinks.join('\n') : null, false),
      field(t('profile.bots'), botLines, false),
    ]),
    footer: { text: profile.id },
  };
  const avatar = httpUrl(identity?.avatarUrl);
  if (avatar) embed.thumbnail = { url: avatar };
  return {
    embeds: [fitEmbed(embed)],
    components: rows([
      ...PROFILE_LINKS.map((k) => linkButton(t(`profile.${k}`), profile[k])),
      actionButton(
        t('common.comments'),
        encodeComments({ mode: 'open', kind: 'profile', id: profile.id, page: 0 }),
      ),
    ]),
  };
}

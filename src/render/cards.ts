/**
 * Cards for bots, servers and profiles: pure functions from our directory types to Discord
 * JSON. Every directory string goes through safeText/safeLine/safeCode/plainText; every URL
 * through linkButton.
 */
import {
  type APIButtonComponentWithCustomId,
  type APIEmbed,
  type APIEmbedField,
  TimestampStyles,
} from 'discord.js';
import type { BotReference, DirectoryBot, DirectoryProfile, DirectoryServer } from '../directory/index.js';
import { resolveLocale, type Translate } from '../i18n/index.js';
import { timestampToDate } from '../time/range.js';
import { COLORS } from './colors.js';
import { actionButton, linkButton, rows } from './components.js';
import { type CommentsKind, commentsCustomId } from './custom-id.js';
import { fitEmbed, LIMITS } from './limits.js';
import type { RenderedMessage } from './message.js';
import {
  httpUrl,
  looksLikeUrl,
  plainText,
  safeCode,
  safeLine,
  safeText,
  timestamp,
  userMention,
} from './text.js';

export interface DiscordIdentity {
  name: string;
  avatarUrl?: string | null;
}

const TAG_LIMIT = 20;
const DEVELOPER_LIMIT = 10;
const BOT_LIMIT = 20;
const SHORT_DESCRIPTION_LIMIT = 1024;
const LONG_DESCRIPTION_LIMIT = 2500;

function field(name: string, value: string | null | undefined, inline = true): APIEmbedField | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return { name, value, inline };
}

function present(fields: Array<APIEmbedField | null>): APIEmbedField[] {
  return fields.filter((f): f is APIEmbedField => f !== null);
}

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(resolveLocale(locale) === 'ru' ? 'ru-RU' : 'en-US').format(value);
}

/** Up to `limit` items, as many as fit in `max` with the "and N more" that follows them. */
function capped(
  items: readonly string[],
  limit: number,
  separator: string,
  t: Translate,
  max: number = LIMITS.fieldValue,
): string {
  const more = (n: number): string => (n > 0 ? t('common.andMore', { count: n }) : '');
  const shown: string[] = [];
  let length = 0;
  for (const item of items.slice(0, limit)) {
    const added = (shown.length > 0 ? separator.length : 0) + item.length;
    const tail = more(items.length - shown.length - 1);
    if (length + added + (tail ? separator.length + tail.length : 0) > max) break;
    shown.push(item);
    length += added;
  }
  const tail = more(items.length - shown.length);
  return [...shown, ...(tail ? [tail] : [])].join(separator);
}

function tagList(tags: readonly string[], t: Translate): string | null {
  const shown = tags.map((tag) => safeCode(tag, 42)).filter((tag) => tag !== '');
  return shown.length > 0 ? capped(shown, TAG_LIMIT, ' ', t) : null;
}

/** An open string (status, badge) as shown: SCREAMING_CASE stays recognisable, escaped. */
function label(value: string | null): string | null {
  return value ? safeLine(value, 100) : null;
}

/** Short and long descriptions, each escaped and cut, without a leading gap when one is missing. */
function descriptions(short: string | null, long: string | null): string {
  return [safeText(short, SHORT_DESCRIPTION_LIMIT), safeText(long, LONG_DESCRIPTION_LIMIT)]
    .filter((part) => part.trim() !== '')
    .join('\n\n');
}

/** `information.added` is a time only when it looks like one (the real sample holds a count). */
function addedAt(added: number | null): Date | null {
  if (added === null || added < 1_000_000_000) return null;
  return timestampToDate(added);
}

/** The directory holds an invite *code*; a full invite link (with or without scheme) is accepted too. */
export function inviteUrl(value: string | null): string | null {
  if (!value) return null;
  const code = value
    .trim()
    .replace(/^(?:https?:\/\/)?(?:www\.)?(?:discord\.gg\/|discord(?:app)?\.com\/invite\/)/i, '');
  if (/^[A-Za-z0-9-]{2,32}$/.test(code)) return `https://discord.gg/${code}`;
  return httpUrl(value);
}

function pageUrl(pageLinks: readonly string[]): string | null {
  for (const link of pageLinks) {
    const url = httpUrl(link);
    if (url) return url;
  }
  return null;
}

/** The comments button, or none when the record's ID cannot travel in a custom_id. */
function commentsButton(kind: CommentsKind, id: string, t: Translate): APIButtonComponentWithCustomId | null {
  const customId = commentsCustomId({ mode: 'open', kind, id, page: 0 });
  return customId ? actionButton(t('common.comments'), customId) : null;
}

/** Link values that are handles rather than URLs (a Steam id, a VK name) are shown as text. */
function textLinks<K extends string>(
  keys: readonly K[],
  values: Record<K, string | null>,
  labelOf: (key: K) => string,
): string | null {
  const lines = keys
    .filter((k) => {
      const v = values[k];
      return v !== null && v.trim() !== '' && !looksLikeUrl(v);
    })
    .map((k) => `${labelOf(k)}: ${safeLine(values[k], 100)}`);
  return lines.length > 0 ? lines.join('\n') : null;
}

export function renderBotCard(
  bot: DirectoryBot,
  t: Translate,
  locale: string,
  identity?: DiscordIdentity | null,
): RenderedMessage {
  const name = identity?.name ?? bot.shortCode ?? bot.id;
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('bot.title', { name }), LIMITS.title),
    description: descriptions(bot.shortDescription, bot.longDescription),
    fields: present([
      field(t('bot.prefix'), safeCode(bot.prefix, 32)),
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
      field(t('bot.added'), timestamp(addedAt(bot.added), TimestampStyles.LongDate)),
      field(
        t('bot.developers'),
        capped(
          bot.developers.map((d) => userMention(d)).filter((d) => d !== ''),
          DEVELOPER_LIMIT,
          ', ',
          t,
        ),
      ),
      field(t('bot.tags'), tagList(bot.tags, t), false),
    ]),
    footer: { text: plainText(bot.shortCode ? `${bot.id} · ${bot.shortCode}` : bot.id, LIMITS.footer) },
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
      commentsButton('bot', bot.id, t),
    ]),
  };
}

const SERVER_LINKS = ['site', 'youtube', 'twitch', 'steam', 'vk'] as const;

export function renderServerCard(server: DirectoryServer, t: Translate, locale: string): RenderedMessage {
  const { all, online } = server.members;
  const members =
    all === null
      ? null
      : online === null
        ? t('plural.members', { count: all })
        : t('server.membersValue', {
            all: t('plural.members', { count: all }),
            online: formatNumber(online, locale),
          });
  const l = server.links;
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('server.title', { name: server.name }), LIMITS.title),
    description: descriptions(server.shortDescription, server.longDescription),
    fields: present([
      field(t('server.members'), members),
      field(t('server.owner'), server.owner ? userMention(server.owner) : null),
      field(t('server.bumps'), formatNumber(server.bumps, locale)),
      field(t('server.status'), label(server.status)),
      field(t('server.badge'), label(server.badge)),
      field(t('server.tags'), tagList(server.tags, t), false),
      field(
        t('server.links'),
        textLinks(SERVER_LINKS, l, (k) => t(`server.${k}`)),
        false,
      ),
    ]),
    footer: {
      text: plainText(server.shortCode ? `${server.id} · ${server.shortCode}` : server.id, LIMITS.footer),
    },
  };
  const avatar = httpUrl(server.avatar);
  if (avatar) embed.thumbnail = { url: avatar };
  return {
    embeds: [fitEmbed(embed)],
    components: rows([
      linkButton(t('server.invite'), inviteUrl(l.invite)),
      linkButton(t('common.directoryPage'), pageUrl(server.pageLinks)),
      ...SERVER_LINKS.map((k) => linkButton(t(`server.${k}`), l[k])),
      commentsButton('server', server.id, t),
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
  const botLines =
    bots === null
      ? null
      : bots.length === 0
        ? t('profile.noBots')
        : capped(
            bots.map((b) => {
              const code = safeCode(b.shortCode, 34);
              return `${userMention(b.id)}${code ? ` · ${code}` : ''}`;
            }),
            BOT_LIMIT,
            '\n',
            t,
          );
  const status = safeText(profile.status, 1500);
  const embed: APIEmbed = {
    color: COLORS.info,
    title: safeLine(t('profile.title', { name }), LIMITS.title),
    description: status.trim() !== '' ? `> ${status.replace(/\n/g, '\n> ')}` : '',
    fields: present([
      field(t('profile.badge'), label(profile.badge)),
      field(t('profile.shortCode'), safeCode(profile.shortCode, 34)),
      field(
        t('profile.links'),
        textLinks(PROFILE_LINKS, profile, (k) => t(`profile.${k}`)),
        false,
      ),
      field(t('profile.bots'), botLines, false),
    ]),
    footer: { text: plainText(profile.id, LIMITS.footer) },
  };
  const avatar = httpUrl(identity?.avatarUrl);
  if (avatar) embed.thumbnail = { url: avatar };
  return {
    embeds: [fitEmbed(embed)],
    components: rows([
      ...PROFILE_LINKS.map((k) => linkButton(t(`profile.${k}`), profile[k])),
      commentsButton('profile', profile.id, t),
    ]),
  };
}

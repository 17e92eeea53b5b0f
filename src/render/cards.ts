/**
 * Cards for bots, servers and profiles: pure functions from our directory types to Discord
 * JSON, as Components V2 layouts (render/layout.ts): a container coloured by status, the avatar
 * beside the title, the descriptions, the facts, the links as buttons. Every directory string
 * goes through safeText/safeLine/safeCode; every URL through linkButton or thumbnail.
 */
import {
  type APIButtonComponentWithCustomId,
  type APIComponentInContainer,
  TimestampStyles,
} from 'discord.js';
import type {
  BotReference,
  DirectoryBot,
  DirectoryProfile,
  DirectoryServer,
  DirectoryUp,
  RatingCount,
  ServerReference,
} from '../directory/index.js';
import { averageRating, countingUps } from '../directory/standing.js';
import { resolveLocale, type Translate } from '../i18n/index.js';
import { timestampToDate } from '../time/range.js';
import { COLORS } from './colors.js';
import { stars } from './comments.js';
import { actionButton, linkButton, rows } from './components.js';
import { type CommentsKind, commentsCustomId } from './custom-id.js';
import {
  container,
  facts,
  fitLayout,
  gallery,
  section,
  separator,
  subtext,
  text,
  thumbnail,
} from './layout.js';
import { LIMITS } from './limits.js';
import type { LayoutMessage, MessageFile } from './message.js';
import {
  httpUrl,
  looksLikeUrl,
  safeCode,
  safeLine,
  safeText,
  timestamp,
  truncate,
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

/** One formatter per language, made once: making an Intl.NumberFormat costs tens of µs. */
const NUMBER_FORMATS = {
  ru: new Intl.NumberFormat('ru-RU'),
  'en-US': new Intl.NumberFormat('en-US'),
} as const;

export function formatNumber(value: number, locale: string): string {
  return NUMBER_FORMATS[resolveLocale(locale)].format(value);
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

/**
 * Tags as names: v1/v2 send names, v3 codes (docs-v3 bots.mdx and servers.mdx "Tags"), named here
 * in the reader's language; a code not listed is shown as its number.
 */
function tagList(
  record: { tags: readonly string[]; tagCodes: readonly number[] | null },
  kind: 'bot' | 'server',
  t: Translate,
): string | null {
  const named = (record.tagCodes ?? []).map((code) => {
    const key = `directoryTags.${kind}${code}`;
    const name = t(key);
    return name === key ? t('common.tagCode', { code }) : name;
  });
  const shown = [...record.tags, ...named].map((tag) => safeCode(tag, 42)).filter((tag) => tag !== '');
  return shown.length > 0 ? capped(shown, TAG_LIMIT, ' ', t) : null;
}

const REVIEW_LIMIT = 3;
const REVIEW_TEXT_LIMIT = 300;

/** The ratings' average and count (v3 `ratings[]`: how many gave each rating), or null. */
function ratingLine(ratings: readonly RatingCount[], locale: string, t: Translate): string | null {
  const rated = averageRating(ratings);
  if (rated === null) return null;
  return t('common.ratingValue', {
    stars: stars(rated.average),
    average: new Intl.NumberFormat(resolveLocale(locale) === 'ru' ? 'ru-RU' : 'en-US', {
      minimumFractionDigits: 1,
      maximumFractionDigits: 1,
    }).format(rated.average),
    count: t('plural.ratings', { count: rated.count }),
  });
}

/** Ups still counting (v3 `ups[]`), with when the next one ends. */
function upsLine(ups: readonly DirectoryUp[], now: number, t: Translate): string | null {
  const { count, nextEndsAt } = countingUps(ups, now);
  if (count === 0) return null;
  return t('common.upsActive', {
    count,
    when: timestamp(nextEndsAt, TimestampStyles.RelativeTime) ?? t('common.unknown'),
  });
}

function withUps(count: string, ups: string | null): string {
  return ups ? `${count} · ${ups}` : count;
}

/** The first reviews (v3, where the directory sends them), with their rating and the moderators' reply. */
function reviewsBlock(record: { reviews: DirectoryBot['reviews'] }, t: Translate): string | null {
  const shown = record.reviews.slice(0, REVIEW_LIMIT).map((r) => {
    const who = r.authorId ? userMention(r.authorId) : safeLine(r.authorName ?? t('common.unknown'), 64);
    const when = timestamp(r.at, TimestampStyles.RelativeTime);
    const head = [r.rating === null ? null : stars(r.rating), who, when].filter(Boolean).join(' · ');
    const body = truncate(safeText(r.text, REVIEW_TEXT_LIMIT * 2).replace(/\n/g, '\n> '), REVIEW_TEXT_LIMIT);
    const reply = r.moderatorReply
      ? `\n> ↳ *${t('common.moderatorReply')}:* ${truncate(safeLine(r.moderatorReply, REVIEW_TEXT_LIMIT * 2), REVIEW_TEXT_LIMIT)}`
      : '';
    return `${head}\n> ${body}${reply}`;
  });
  if (shown.length === 0) return null;
  const more = record.reviews.length - shown.length;
  return [
    `**${t('common.reviews')}**`,
    ...shown,
    ...(more > 0 ? [t('common.andMore', { count: more })] : []),
  ].join('\n');
}

/** Users as mentions, capped. */
function mentions(ids: readonly string[], t: Translate): string | null {
  const shown = ids.map((d) => userMention(d)).filter((d) => d !== '');
  return shown.length > 0 ? capped(shown, DEVELOPER_LIMIT, ', ', t) : null;
}

/** An open string (status, badge) as shown: SCREAMING_CASE stays recognisable, escaped. */
function label(value: string | null): string | null {
  return value ? safeLine(value, 100) : null;
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

/**
 * A card's accent colour by the record's status: green for an approved bot or a server taking
 * members, red for one refused or banned, yellow while it waits; the usual blue otherwise (the
 * directory's statuses are open strings: one not known here is not judged).
 */
export function statusColor(status: string | null): number {
  if (status === null) return COLORS.info;
  const s = status.toUpperCase();
  if (/BAN|BLOCK|DECLIN|REJECT|DELETED|DENIED/.test(s)) return COLORS.error;
  if (/PEND|WAIT|REVIEW|MODERAT|CHECK/.test(s)) return COLORS.cooldown;
  if (/APPROVED|ACCEPT|VERIFIED|ACTIVE/.test(s)) return COLORS.success;
  return COLORS.info;
}

/** A card's opening: the title as a heading and the first text, beside the avatar when there is one. */
function heading(
  title: string,
  first: string | null,
  avatar: string | null | undefined,
  name: string,
  t: Translate,
): APIComponentInContainer[] {
  return section(
    [text(`### ${safeLine(title, LIMITS.title)}`), text(first)],
    thumbnail(httpUrl(avatar), t('common.avatar', { name })),
  );
}

export function renderBotCard(
  bot: DirectoryBot,
  t: Translate,
  locale: string,
  identity?: DiscordIdentity | null,
  now: number = Date.now(),
): LayoutMessage {
  const name = identity?.name ?? bot.name ?? bot.shortCode ?? bot.id;
  const none = t('common.none');
  const { servers, shards, users } = bot.stats;
  const knownStats = bot.stats.servers !== null || bot.stats.shards !== null || bot.stats.users !== null;
  const details = facts([
    [t('bot.prefix'), safeCode(bot.prefix, 32)],
    [t('bot.library'), bot.library ? safeLine(bot.library, 100) : null],
    [t('bot.bumps'), withUps(formatNumber(bot.bumps, locale), upsLine(bot.ups, now, t))],
    [t('common.rating'), ratingLine(bot.ratings, locale, t)],
    [
      t('bot.stats'),
      knownStats
        ? t('bot.statsValue', {
            servers: servers === null ? none : t('plural.servers', { count: servers }),
            shards: shards === null ? none : t('plural.shards', { count: shards }),
            users: users === null ? none : t('plural.users', { count: users }),
          })
        : null,
    ],
    [t('bot.status'), label(bot.status)],
    [t('bot.badge'), label(bot.badge)],
    [t('bot.added'), timestamp(bot.createdAt ?? addedAt(bot.added), TimestampStyles.LongDate)],
    [t('bot.owner'), bot.owner ? userMention(bot.owner) : null],
    [t('bot.developers'), mentions(bot.developers, t)],
  ]);
  const card = container(statusColor(bot.status), [
    heading(
      t('bot.title', { name }),
      safeText(bot.shortDescription, SHORT_DESCRIPTION_LIMIT),
      identity?.avatarUrl ?? bot.avatar,
      name,
      t,
    ),
    text(safeText(bot.longDescription, LONG_DESCRIPTION_LIMIT)),
    separator(),
    text(details),
    text(facts([[t('bot.tags'), tagList(bot, 'bot', t)]])),
    text(reviewsBlock(bot, t)),
    separator({ divider: false }),
    subtext(safeLine(bot.shortCode ? `${bot.id} · ${bot.shortCode}` : bot.id, LIMITS.footer)),
    rows([
      linkButton(t('bot.invite'), bot.inviteLink),
      linkButton(t('bot.site'), bot.links.site),
      linkButton(t('bot.github'), bot.links.github),
      linkButton(t('bot.support'), inviteUrl(bot.links.discord)),
      linkButton(t('common.directoryPage'), pageUrl(bot.pageLinks)),
      commentsButton('bot', bot.id, t),
    ]),
  ]);
  return { layout: fitLayout([card]) };
}

const SERVER_LINKS = ['site', 'youtube', 'twitch', 'steam', 'vk'] as const;

/** A chart under a card: the picture with its alt text, and its figures in words. */
export interface CardChart {
  file: MessageFile;
  title: string;
  text: string;
}

export function renderServerCard(
  server: DirectoryServer,
  t: Translate,
  locale: string,
  chart?: CardChart | null,
  now: number = Date.now(),
): LayoutMessage {
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
  const details = facts([
    [t('server.members'), members],
    [t('server.owner'), server.owner ? userMention(server.owner) : null],
    [t('server.moderators'), mentions(server.moderators, t)],
    [t('server.bumps'), withUps(formatNumber(server.bumps, locale), upsLine(server.ups, now, t))],
    [t('common.rating'), ratingLine(server.ratings, locale, t)],
    [t('server.status'), label(server.status)],
    [t('server.badge'), label(server.badge)],
    [t('server.added'), timestamp(server.createdAt, TimestampStyles.LongDate)],
    [t('server.tags'), tagList(server, 'server', t)],
    [t('server.links'), textLinks(SERVER_LINKS, l, (k) => t(`server.${k}`))],
  ]);
  const card = container(statusColor(server.status), [
    heading(
      t('server.title', { name: server.name }),
      safeText(server.shortDescription, SHORT_DESCRIPTION_LIMIT),
      server.avatar,
      server.name,
      t,
    ),
    text(safeText(server.longDescription, LONG_DESCRIPTION_LIMIT)),
    separator(),
    text(details),
    text(reviewsBlock(server, t)),
    ...(chart
      ? [
          separator(),
          text(`**${chart.title}**\n${chart.text}`),
          gallery([{ url: `attachment://${chart.file.name}`, description: chart.file.description }]),
        ]
      : []),
    separator({ divider: false }),
    subtext(safeLine(server.shortCode ? `${server.id} · ${server.shortCode}` : server.id, LIMITS.footer)),
    rows([
      linkButton(t('server.invite'), inviteUrl(l.invite)),
      linkButton(t('common.directoryPage'), pageUrl(server.pageLinks)),
      ...SERVER_LINKS.map((k) => linkButton(t(`server.${k}`), l[k])),
      commentsButton('server', server.id, t),
    ]),
  ]);
  return { layout: fitLayout([card]), ...(chart ? { files: [chart.file] } : {}) };
}

const PROFILE_LINKS = ['site', 'vk', 'telegram', 'steam', 'youtube', 'twitch', 'git', 'donate'] as const;

/** A list of the user's bots or servers: mentions for bots, names for servers, with short codes. */
function referenceLines(
  refs: readonly (BotReference | ServerReference)[] | null,
  kind: 'bot' | 'server',
  none: string,
  t: Translate,
): string | null {
  if (refs === null) return null;
  if (refs.length === 0) return none;
  return capped(
    refs.map((r) => {
      const code = safeCode(r.shortCode, 34);
      const shown = kind === 'bot' ? userMention(r.id) : safeLine(r.name ?? r.id, 100);
      return `${shown}${code ? ` · ${code}` : ''}`;
    }),
    BOT_LIMIT,
    '\n',
    t,
  );
}

export function renderProfileCard(
  profile: DirectoryProfile,
  bots: readonly BotReference[] | null,
  t: Translate,
  identity?: DiscordIdentity | null,
): LayoutMessage {
  const name = identity?.name ?? profile.name ?? profile.shortCode ?? profile.id;
  // v3's profile lists the user's bots itself; v1/v2 ask for them apart (`bots`).
  const botLines = referenceLines(profile.bots ?? bots, 'bot', t('profile.noBots'), t);
  const serverLines = referenceLines(profile.servers, 'server', t('profile.noServers'), t);
  const status = safeText(profile.status, 1500);
  const card = container(COLORS.info, [
    heading(
      t('profile.title', { name }),
      status.trim() !== '' ? `> ${status.replace(/\n/g, '\n> ')}` : null,
      identity?.avatarUrl ?? profile.avatar,
      name,
      t,
    ),
    text(safeText(profile.description, SHORT_DESCRIPTION_LIMIT)),
    separator(),
    text(
      facts([
        [t('profile.badge'), label(profile.badge)],
        [
          t('profile.badges'),
          profile.badges.length > 0
            ? capped(
                profile.badges.map((b) => safeLine(b, 64)),
                TAG_LIMIT,
                ', ',
                t,
              )
            : null,
        ],
        [t('profile.shortCode'), safeCode(profile.shortCode, 34)],
        [t('profile.links'), textLinks(PROFILE_LINKS, profile, (k) => t(`profile.${k}`))],
        [t('profile.bots'), botLines],
        [t('profile.servers'), serverLines],
      ]),
    ),
    separator({ divider: false }),
    subtext(safeLine(profile.id, LIMITS.footer)),
    rows([
      ...PROFILE_LINKS.map((k) => linkButton(t(`profile.${k}`), profile[k])),
      commentsButton('profile', profile.id, t),
    ]),
  ]);
  return { layout: fitLayout([card]) };
}

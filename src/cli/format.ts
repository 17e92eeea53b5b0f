/**
 * Readable output: aligned `key: value` blocks, lists and comment listings. Text that comes from
 * the directory has its controls escaped here already, so that columns are measured on what is
 * shown; the printer escapes whatever a format leaves (output.ts).
 */

import { averageRating, countingUps } from '../directory/standing.js';
import type {
  ApiVersion,
  AttachedRef,
  BotReference,
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryReview,
  DirectoryServer,
  DirectoryUp,
  OkResult,
  ProfileComments,
  RatingCount,
  SearchHit,
  ServerReference,
  ServerUpResult,
  ShortLink,
  TokenInfo,
  ValidateBotResult,
} from '../directory/types.js';
import { escapeControls } from '../text/controls.js';
import { isUsableTime } from '../time/range.js';

export type Value = string | number | boolean | null | undefined | readonly string[];
export type Row = readonly [key: string, value: Value];

const NONE = '-';

/** Directory text for a value: CR LF and CR as new lines, tabs as spaces, other controls escaped. */
export function clean(text: string): string {
  return escapeControls(text.replace(/\r\n?/g, '\n').replace(/\t/g, ' '));
}

/** Directory text for a key, a cell or a heading: one line. */
function inline(text: string): string {
  return clean(text).replace(/\n/g, ' ');
}

function show(value: Exclude<Value, readonly string[]>): string {
  if (value === null || value === undefined || value === '') return NONE;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return clean(String(value));
}

function lines(value: Value): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [NONE] : value.map((v: string) => show(v));
  return show(value as Exclude<Value, readonly string[]>).split('\n');
}

/** `key: value` lines with the values in one column; list and multi-line values continue under it. */
export function keyValues(rows: readonly Row[]): string {
  const shown = rows.map(([key, value]): Row => [inline(key), value]);
  const width = Math.max(0, ...shown.map(([key]) => key.length + 1));
  const out: string[] = [];
  for (const [key, value] of shown) {
    const [first = NONE, ...rest] = lines(value);
    out.push(`${`${key}:`.padEnd(width)} ${first}`.trimEnd());
    for (const line of rest) out.push(`${' '.repeat(width)} ${line}`.trimEnd());
  }
  return `${out.join('\n')}\n`;
}

/** Columns padded to the widest cell; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map(inline));
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const render = (row: readonly string[]): string =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${all.map(render).join('\n')}\n`;
}

/** ISO 8601, or null for no time or one out of range (an Invalid Date would throw or print NaN). */
export function iso(date: Date | null): string | null {
  return date === null || !isUsableTime(date.getTime()) ? null : date.toISOString();
}

/** `in 3h 59m`, `in 0h 1m` (minutes rounded up), or `now` when the time has come. */
export function relative(date: Date, now: number): string {
  const ms = date.getTime() - now;
  if (ms <= 0) return 'now';
  const minutes = Math.ceil(ms / 60_000);
  return `in ${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** `information.added` is a time when it looks like epoch milliseconds, else shown as sent. */
function added(value: number | null): string | null {
  if (value === null) return null;
  return value >= 1e11 && value < 1e14 ? `${new Date(value).toISOString()} (${value})` : String(value);
}

function attached(ref: AttachedRef | null): string | null {
  if (ref === null || ref.id === null) return null;
  return `${ref.id}${ref.approved ? ' (approved)' : ' (not approved)'}`;
}

/** How a record is shown: v3's records have more (and some v1/v2 fields are empty there). */
export interface FormatOptions {
  version: ApiVersion;
  /** Epoch ms, to tell which ups still count. */
  now: number;
}

/** Reviews shown in full in the readable form; --json has them all. */
export const REVIEWS_SHOWN = 3;

/** A review's text in the listing is cut to this many characters. */
const REVIEW_TEXT = 160;

function cut(text: string, max: number): string {
  const one = inline(text).trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** `★ 4.6 (15 ratings)`: the average of `ratings[]` weighted by how many gave each; null for none. */
export function formatRating(ratings: readonly RatingCount[]): string | null {
  const rated = averageRating(ratings);
  if (rated === null) return null;
  return `★ ${rated.average.toFixed(1)} (${rated.count} rating${rated.count === 1 ? '' : 's'})`;
}

/** The first REVIEWS_SHOWN reviews, one line each, the moderators' reply under its review. */
function reviewLines(reviews: readonly DirectoryReview[]): string[] {
  if (reviews.length === 0) return [];
  const out: string[] = [];
  for (const r of reviews.slice(0, REVIEWS_SHOWN)) {
    const stars = r.rating === null ? '★ -' : `★ ${r.rating}`;
    const who = `${r.authorName === null ? '' : `${cut(r.authorName, 40)} `}(${r.authorId ?? 'unknown author'})`;
    out.push(`${stars}  ${iso(r.at) ?? 'unknown time'}  ${who}: ${cut(r.text, REVIEW_TEXT) || '-'}`);
    if (r.moderatorReply !== null && r.moderatorReply.trim() !== '') {
      out.push(`  ↳ moderators: ${cut(r.moderatorReply, REVIEW_TEXT)}`);
    }
  }
  if (reviews.length > REVIEWS_SHOWN) {
    out.push(`… ${reviews.length - REVIEWS_SHOWN} more (--json has them all)`);
  }
  return out;
}

/** How many ups count now, when the next of them expires, and how many listed have expired. */
function upsLine(ups: readonly DirectoryUp[], now: number): string {
  const { count, nextEndsAt, expired } = countingUps(ups, now);
  const parts = [String(count)];
  if (nextEndsAt !== null && iso(nextEndsAt) !== null) {
    parts.push(` (the next expires ${iso(nextEndsAt)}, ${relative(nextEndsAt, now)})`);
  }
  if (expired > 0) parts.push(`; ${expired} listed ha${expired === 1 ? 's' : 've'} expired`);
  return parts.join('');
}

/** v3's numeric tags as `#2`; the names the directory may also send, as they are. */
function tagsV3(codes: readonly number[] | null, names: readonly string[]): string[] {
  return [...(codes ?? []).map((c) => `#${c}`), ...names];
}

/** What v3 says of a bot or server's standing: ups, rating, reviews. */
function standingRows(r: Pick<DirectoryBot, 'upCount' | 'ratings' | 'reviews' | 'ups'>, now: number): Row[] {
  return [
    ['up count', r.upCount],
    ['rating', formatRating(r.ratings)],
    ['ups counting', upsLine(r.ups, now)],
    ['reviews', r.reviews.length],
    ...(r.reviews.length > 0 ? ([['first reviews', reviewLines(r.reviews)]] as Row[]) : []),
  ];
}

function formatBotV3(bot: DirectoryBot, now: number): string {
  return keyValues([
    ['id', bot.id],
    ['name', bot.name],
    ['short code', bot.shortCode],
    ['status', bot.status],
    ['owner', bot.owner],
    ...standingRows(bot, now),
    ['prefix', bot.prefix],
    ['library', bot.library],
    ['servers', bot.stats.servers],
    ['shards', bot.stats.shards],
    ['members', bot.stats.users],
    ['developers', bot.developers],
    ['tags', tagsV3(bot.tagCodes, bot.tags)],
    ['added', iso(bot.createdAt)],
    ['invite', bot.inviteLink ?? bot.links.discord],
    ['github', bot.links.github],
    ['site', bot.links.site],
    ['support server', attached(bot.supportServer)],
    ['avatar', bot.avatar],
    ['pages', bot.pageLinks],
    ['short description', bot.shortDescription],
    ['long description', bot.longDescription],
  ]);
}

export function formatBot(bot: DirectoryBot, options?: FormatOptions): string {
  if (options?.version === 'v3') return formatBotV3(bot, options.now);
  return keyValues([
    ['id', bot.id],
    ['short code', bot.shortCode],
    ['status', bot.status],
    ['badge', bot.badge],
    ['bumps', bot.bumps],
    ['prefix', bot.prefix],
    ['library', bot.library],
    ['permissions', bot.permissions],
    ['added', added(bot.added)],
    ['servers', bot.stats.servers],
    ['shards', bot.stats.shards],
    ['users', bot.stats.users],
    ['developers', bot.developers],
    ['tags', bot.tags],
    ['invite', bot.links.discord],
    ['github', bot.links.github],
    ['site', bot.links.site],
    ['support server', attached(bot.supportServer)],
    ['pages', bot.pageLinks],
    ['short description', bot.shortDescription],
    ['long description', bot.longDescription],
  ]);
}

function formatServerV3(server: DirectoryServer, members: string | null, now: number): string {
  return keyValues([
    ['id', server.id],
    ['name', server.name],
    ['short code', server.shortCode],
    ['status', server.status],
    ['owner', server.owner],
    ['moderators', server.moderators],
    ...standingRows(server, now),
    ['members', members],
    ['tags', tagsV3(server.tagCodes, server.tags)],
    ['added', iso(server.createdAt)],
    ['invite', server.links.invite],
    ['site', server.links.site],
    ['youtube', server.links.youtube],
    ['twitch', server.links.twitch],
    ['steam', server.links.steam],
    ['vk', server.links.vk],
    ['bot', attached(server.bot)],
    ['avatar', server.avatar],
    ['pages', server.pageLinks],
    ['short description', server.shortDescription],
    ['long description', server.longDescription],
  ]);
}

export function formatServer(server: DirectoryServer, options?: FormatOptions): string {
  const { all, online } = server.members;
  const members = all === null ? null : `${all}${online === null ? '' : ` (${online} online)`}`;
  if (options?.version === 'v3') return formatServerV3(server, members, options.now);
  return keyValues([
    ['id', server.id],
    ['short code', server.shortCode],
    ['name', server.name],
    ['status', server.status],
    ['badge', server.badge],
    ['bumps', server.bumps],
    ['members', members],
    ['owner', server.owner],
    ['avatar', server.avatar],
    ['tags', server.tags],
    ['invite', server.links.invite],
    ['site', server.links.site],
    ['youtube', server.links.youtube],
    ['twitch', server.links.twitch],
    ['steam', server.links.steam],
    ['vk', server.links.vk],
    ['bot', attached(server.bot)],
    ['pages', server.pageLinks],
    ['short description', server.shortDescription],
    ['long description', server.longDescription],
  ]);
}

function references(refs: readonly (BotReference | ServerReference)[] | null): string[] {
  return (refs ?? []).map((r) => {
    const name = r.name ? `  ${cut(r.name, 60)}` : '';
    return `${r.id}${r.shortCode ? ` (${inline(r.shortCode)})` : ''}${name}`;
  });
}

function formatProfileV3(profile: DirectoryProfile): string {
  return keyValues([
    ['id', profile.id],
    ['name', profile.name],
    ['short code', profile.shortCode],
    ['status', profile.status],
    ['badges', profile.badges],
    ['description', profile.description],
    ['avatar', profile.avatar],
    ['site', profile.site],
    ['vk', profile.vk],
    ['steam', profile.steam],
    ['youtube', profile.youtube],
    ['twitch', profile.twitch],
    ['git', profile.git],
    ['telegram', profile.telegram],
    ['donate', profile.donate],
    [`bots (${profile.bots?.length ?? 0})`, references(profile.bots)],
    [`servers (${profile.servers?.length ?? 0})`, references(profile.servers)],
  ]);
}

export function formatProfile(profile: DirectoryProfile, options?: Pick<FormatOptions, 'version'>): string {
  if (options?.version === 'v3') return formatProfileV3(profile);
  return keyValues([
    ['id', profile.id],
    ['short code', profile.shortCode],
    ['status', profile.status],
    ['badge', profile.badge],
    ['site', profile.site],
    ['vk', profile.vk],
    ['steam', profile.steam],
    ['youtube', profile.youtube],
    ['twitch', profile.twitch],
    ['git', profile.git],
  ]);
}

/** The emoji take two terminal cells: the neutral dot is padded to match. */
const VOTES: Record<number, string> = { 1: '👍', [-1]: '👎', 0: '· ' };

export function formatComments(comments: readonly DirectoryComment[]): string {
  if (comments.length === 0) return 'no comments\n';
  const out: string[] = [];
  for (const c of comments) {
    const when = iso(c.at) ?? 'unknown time';
    const stars = typeof c.rating === 'number' ? `  ★ ${c.rating}` : '';
    out.push(
      `${VOTES[c.vote] ?? '· '} ${when}  ${inline(c.userId)}${stars}${c.isUpdated ? '  (edited)' : ''}`,
    );
    for (const line of clean(c.text).split('\n')) out.push(`    ${line}`.trimEnd());
    if (typeof c.moderatorReply === 'string' && c.moderatorReply.trim() !== '') {
      for (const [i, line] of clean(c.moderatorReply).split('\n').entries()) {
        out.push(`    ${i === 0 ? '↳ moderators: ' : '  '}${line}`.trimEnd());
      }
    }
  }
  return `${out.join('\n')}\n`;
}

export function formatProfileComments(comments: ProfileComments): string {
  const section = (title: string, list: readonly DirectoryComment[]): string =>
    `${title} (${list.length}):\n${list.length === 0 ? '' : formatComments(list)}`;
  // v3 reads them from the search's comments index, which does not say what each is about.
  if (comments.other !== undefined && comments.bots.length === 0 && comments.servers.length === 0) {
    return section('on bots and servers (API v3 does not say which)', comments.other);
  }
  const other =
    comments.other === undefined ? '' : `\n${section('on bots or servers (not said which)', comments.other)}`;
  return `${section('on bots', comments.bots)}\n${section('on servers', comments.servers)}${other}`;
}

export function formatSearchHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return 'nothing found\n';
  return table(
    ['id', 'name', 'ups', 'rating', 'short description'],
    hits.map((h) => [
      h.id,
      cut(h.name, 40),
      show(h.ups),
      h.rating === null ? NONE : `★ ${h.rating.toFixed(1)}`,
      h.shortDescription === null ? NONE : cut(h.shortDescription, 80),
    ]),
  );
}

export function formatBotReferences(bots: readonly BotReference[]): string {
  if (bots.length === 0) return 'no bots\n';
  return table(
    ['id', 'short code'],
    bots.map((b) => [b.id, show(b.shortCode)]),
  );
}

export function formatLinks(links: readonly ShortLink[]): string {
  if (links.length === 0) return 'no links\n';
  return table(
    ['code', 'domain', 'views', 'created', 'link'],
    links.map((l) => [show(l.code), show(l.domain), String(l.views), show(iso(l.createdAt)), show(l.link)]),
  );
}

export function formatOk(result: OkResult, what: string, failed: string): string {
  return `${result.ok ? what : failed}\n`;
}

export function formatValidateBot(result: ValidateBotResult): string {
  return keyValues([['valid', result.ok]]);
}

export function formatTokenInfo(info: TokenInfo): string {
  const extra: Row[] = Object.entries(info.raw)
    .filter(([key]) => key !== 'ok' && key !== 'type')
    .map(([key, value]): Row => [key, typeof value === 'string' ? value : JSON.stringify(value)]);
  return keyValues([['ok', info.ok], ['type', info.type], ...extra]);
}

export function formatUp(result: ServerUpResult, now: number): string {
  const at = iso(result.nextUpAt);
  const next = at === null || result.nextUpAt === null ? null : `${at} (${relative(result.nextUpAt, now)})`;
  return keyValues([
    ['message', result.message],
    ['server', result.serverId],
    ['updated', result.updated],
    ['up', result.up === 1 ? (result.upSuccessfully ? 'registered' : 'not registered') : 'not asked'],
    ['bumps', result.bumps],
    ['boost', result.boost],
    ['next up', next],
  ]);
}

/** `--json`: the validated result, Dates as ISO strings (Date#toJSON). */
export function toJson(data: unknown): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

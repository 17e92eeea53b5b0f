/**
 * v3's answers checked at the boundary and turned into the same records v1/v2 give (types.ts):
 * the cards, the CLI and the features read those, never v3's JSON. Sources for every field and
 * where they disagree: docs/directory-v3-sources.md; fixtures: test/fixtures/directory-v3/.
 *
 * Strict on what steers a request, a route or a custom_id (a resource's id is a Discord ID, or the
 * answer is refused), tolerant of everything else: added fields are ignored, a field the sources
 * name in several ways is read under each (`memberCount` or `members`; the support server's invite
 * under three names; `premium{}` nested or flat), numbers may come as strings (`ups[].expires`),
 * lists are cut to what a card can show, and a list or field of the wrong type is left out
 * rather than failing the whole card.
 */
import { z } from 'zod';
import { timestampToDate } from '../../time/range.js';
import { count, type Id, id, text, toCount, toCountOrNull, toText } from '../fields.js';
import { SNOWFLAKE_PATTERN } from '../refs.js';
import type {
  BotReference,
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryReview,
  DirectoryServer,
  DirectoryUp,
  RatingCount,
  ResourceExtras,
  SearchHit,
  ServerReference,
  Vote,
} from '../types.js';
import { libraryName, statusName } from './names.js';

/** How many of each list a record keeps: more than any card shows, bounded whatever is sent. */
const LIST_LIMITS = { developers: 50, reviews: 50, ups: 1_000, tags: 50, ratings: 10, refs: 100 } as const;

/** The id of a resource, which steers routes and custom_ids: a Discord ID, nothing else. */
const snowflake = z.union([
  z.string().regex(SNOWFLAKE_PATTERN, 'expected a Discord ID (17 to 20 digits)'),
  z.number().int().nonnegative().transform(String).pipe(z.string().regex(SNOWFLAKE_PATTERN)),
]);

/** A value that is shown only: anything else becomes null rather than failing the answer. */
const loose = <T extends z.ZodType>(schema: T) => schema.nullable().optional().catch(null);
const looseText = loose(z.string());
const looseCount = loose(count);
const looseNumberOrText = loose(z.union([z.number(), z.string()]));
/** A list shown only: of the wrong type it is empty; its items of the wrong type are left out. */
const looseList = <T extends z.ZodType>(item: T, max: number) =>
  z
    .array(z.unknown())
    .nullable()
    .optional()
    .catch(null)
    .transform((list) => {
      const out: z.output<T>[] = [];
      for (const value of list ?? []) {
        const parsed = item.safeParse(value);
        if (parsed.success) out.push(parsed.data);
        if (out.length === max) break;
      }
      return out;
    });

/** A user as v3 embeds one (a developer, a moderator, a review's author): an object, or its ID. */
const partialUser = z.union([
  z.object({ id, username: looseText }).transform((u) => ({ id: String(u.id), name: u.username ?? null })),
  id.transform((v: Id) => ({ id: String(v), name: null as string | null })),
]);

const rating = z
  .object({ count, rating: count })
  .transform((r): RatingCount => ({ rating: toCount(r.rating), count: toCount(r.count) }));

/** `expires`: epoch ms as a number (docs) or a string of digits (the SDKs). */
const up = z.object({ id: looseNumberOrText, expires: looseCount }).transform(
  (u): DirectoryUp => ({
    id: u.id === null || u.id === undefined ? null : String(u.id),
    expiresAt: timestampToDate(toCountOrNull(u.expires)),
  }),
);

const review = z
  .object({
    id: looseNumberOrText,
    author: partialUser.nullable().optional().catch(null),
    content: z.string(),
    createdDate: looseNumberOrText,
    modReply: looseText,
    rating: looseCount,
  })
  .transform(
    (r): DirectoryReview => ({
      id: r.id === null || r.id === undefined ? null : String(r.id),
      authorId: r.author?.id ?? null,
      authorName: r.author?.name ?? null,
      rating: starRating(toCountOrNull(r.rating)),
      text: r.content,
      at: dateOf(r.createdDate),
      moderatorReply: r.modReply || null,
    }),
  );

/** A rating of 1 to 5, or null. */
function starRating(value: number | null): number | null {
  return value !== null && Number.isInteger(value) && value >= 1 && value <= 5 ? value : null;
}

/** `createdDate` is an ISO string (docs); the search service's `created` epoch ms. */
function dateOf(value: string | number | null | undefined): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number' || /^\d+$/.test(value)) return timestampToDate(Number(value));
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : timestampToDate(ms);
}

/** An avatar: a URL as sent, or Discord's CDN URL from a hash. */
function avatarUrl(value: string | null | undefined, id: string, kind: 'avatars' | 'icons'): string | null {
  if (!value) return null;
  if (/^https?:\/\//i.test(value)) return value;
  if (!/^(a_)?[0-9a-f]{32}$/.test(value)) return null;
  return `https://cdn.discordapp.com/${kind}/${id}/${value}.${value.startsWith('a_') ? 'gif' : 'png'}?size=256`;
}

/** Positive counts only: v3 leaves a count it does not know out, or (in some answers) sends 0. */
function knownCount(value: z.output<typeof looseCount>): number | null {
  const n = value === null || value === undefined ? null : toCount(value);
  return n !== null && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The fields a bot and a server share. */
const resourceFields = {
  id: snowflake,
  name: looseText,
  shortDescription: looseText,
  description: looseText,
  avatar: looseText,
  shortLink: looseText,
  inviteLink: looseText,
  owner: looseNumberOrText,
  status: looseNumberOrText,
  ratings: looseList(rating, LIST_LIMITS.ratings),
  createdDate: looseNumberOrText,
  website: looseText,
  tags: looseList(z.union([z.number().int(), z.string()]), LIST_LIMITS.tags),
  upCount: looseCount,
  ups: looseList(up, LIST_LIMITS.ups),
  reviews: looseList(review, LIST_LIMITS.reviews),
};

const resourceObject = z.object(resourceFields);
type ResourceInput = z.output<typeof resourceObject>;

function extrasOf(r: ResourceInput, avatarKind: 'avatars' | 'icons'): ResourceExtras {
  const id = r.id;
  return {
    name: r.name ?? null,
    avatar: avatarUrl(r.avatar, id, avatarKind),
    owner: r.owner === null || r.owner === undefined ? null : String(r.owner),
    upCount: knownCount(r.upCount),
    ratings: r.ratings,
    reviews: r.reviews,
    ups: r.ups,
    createdAt: dateOf(r.createdDate),
    tagCodes: r.tags.filter((t): t is number => typeof t === 'number'),
  };
}

/** The directory's page for a resource: boticord.top/bot/{shortLink or id}, /server/… likewise. */
function pageLink(kind: 'bot' | 'server', r: ResourceInput): string[] {
  const slug = r.shortLink && /^[A-Za-z0-9_-]{1,32}$/.test(r.shortLink) ? r.shortLink : r.id;
  return [`https://boticord.top/${kind}/${slug}`];
}

const resourceText = (r: ResourceInput) => ({
  shortDescription: r.shortDescription ?? null,
  longDescription: r.description ?? null,
  tags: r.tags.filter((t): t is string => typeof t === 'string'),
});

export const v3BotSchema = z.compile(
  z
    .object({
      ...resourceFields,
      prefix: looseText,
      library: looseNumberOrText,
      guilds: looseCount,
      shards: looseCount,
      members: looseCount,
      supportServerInviteLink: looseText,
      supportServerInviteCode: looseText,
      support_server_invite: looseText,
      developers: looseList(partialUser, LIST_LIMITS.developers),
    })
    .transform((b): DirectoryBot => {
      const extras = extrasOf(b, 'avatars');
      return {
        ...extras,
        ...resourceText(b),
        id: b.id,
        shortCode: b.shortLink ?? null,
        pageLinks: pageLink('bot', b),
        inviteLink: b.inviteLink ?? null,
        supportServer: null,
        bumps: extras.upCount ?? 0,
        added: null,
        prefix: b.prefix ?? null,
        permissions: null,
        developers: b.developers.map((d) => d.id),
        links: {
          // The support server's invite: three names across the docs and the SDKs.
          discord: b.supportServerInviteLink ?? b.supportServerInviteCode ?? b.support_server_invite ?? null,
          github: null,
          site: b.website ?? null,
        },
        library: libraryName(b.library),
        badge: null,
        stats: { servers: knownCount(b.guilds), shards: knownCount(b.shards), users: knownCount(b.members) },
        status: statusName(b.status),
      };
    }),
);

export const v3ServerSchema = z.compile(
  z
    .object({
      ...resourceFields,
      name: z.string(),
      invite: looseText,
      memberCount: looseCount,
      members: looseCount,
      moderators: looseList(partialUser, LIST_LIMITS.developers),
    })
    .transform((s): DirectoryServer => {
      const extras = extrasOf(s, 'icons');
      return {
        ...extras,
        ...resourceText(s),
        id: s.id,
        name: s.name,
        shortCode: s.shortLink ?? null,
        status: statusName(s.status),
        pageLinks: pageLink('server', s),
        bot: null,
        // `memberCount` (English docs, boticordpy, botikotlin) or `members` (Russian docs, boticordjava).
        members: { all: knownCount(s.memberCount ?? s.members), online: null },
        bumps: extras.upCount ?? 0,
        moderators: s.moderators.map((m) => m.id),
        links: {
          invite: s.invite ?? s.inviteLink ?? null,
          site: s.website ?? null,
          youtube: null,
          twitch: null,
          steam: null,
          vk: null,
        },
        badge: null,
      };
    }),
);

const botRef = z
  .object({ id: snowflake, name: looseText, shortLink: looseText })
  .transform((b): BotReference => ({ id: b.id, shortCode: b.shortLink ?? null, name: b.name ?? null }));
const serverRef = z
  .object({ id: snowflake, name: looseText, shortLink: looseText })
  .transform((s): ServerReference => ({ id: s.id, shortCode: s.shortLink ?? null, name: s.name ?? null }));

const socials = z
  .object({
    vk: looseText,
    telegram: looseText,
    donate: looseText,
    // boticordjava's Gson key.
    Donate: looseText,
    git: looseText,
    custom: looseText,
  })
  .nullable()
  .optional()
  .catch(null);

export const v3ProfileSchema = z.compile(
  z
    .object({
      id: snowflake,
      username: looseText,
      avatar: looseText,
      status: looseText,
      description: looseText,
      shortDescription: looseText,
      shortDomain: looseText,
      badges: looseList(
        z.object({ name: z.string() }).transform((b) => b.name),
        20,
      ),
      bots: looseList(botRef, LIST_LIMITS.refs),
      servers: looseList(serverRef, LIST_LIMITS.refs),
      socials,
    })
    .transform(
      (p): DirectoryProfile => ({
        id: p.id,
        name: p.username ?? null,
        avatar: avatarUrl(p.avatar, p.id, 'avatars'),
        status: p.status ?? null,
        description: p.shortDescription ?? p.description ?? null,
        badge: null,
        badges: p.badges,
        shortCode: p.shortDomain ?? null,
        bots: p.bots,
        servers: p.servers,
        site: p.socials?.custom ?? null,
        vk: p.socials?.vk ?? null,
        telegram: p.socials?.telegram ?? null,
        donate: p.socials?.donate ?? p.socials?.Donate ?? null,
        git: p.socials?.git ?? null,
        steam: null,
        youtube: null,
        twitch: null,
      }),
    ),
);

/** The developer's bots, as v3's profile lists them. */
export const v3DeveloperBotsSchema = z.compile(
  z.object({ id: snowflake, bots: looseList(botRef, LIST_LIMITS.refs) }).transform((p) => p.bots),
);

/** GET /search-key: `{ key }` (boticordjava SearchKey, boticordpy). */
export const v3SearchKeySchema = z.compile(
  // Printable ASCII without spaces: it goes into a header.
  z.object({ key: z.string().regex(/^[\x21-\x7e]{1,1000}$/) }).transform((k) => k.key),
);

/** The stats route answers with the bot (docs-v3 bots.mdx): any object is taken as done. */
export const v3StatsSchema = z.compile(z.unknown().transform(() => ({ ok: true })));

/** The comments index's hit (docs-v3 search.mdx MeiliIndexedComment). */
const commentHit = z
  .object({
    id: looseNumberOrText,
    author: z.union([z.string().regex(SNOWFLAKE_PATTERN), z.number().int().nonnegative()]),
    content: z.string(),
    rating: looseCount,
    created: looseNumberOrText,
    modReply: looseText,
  })
  .transform((c): DirectoryComment => {
    const stars = starRating(toCountOrNull(c.rating));
    return {
      userId: String(c.author),
      text: c.content,
      vote: (stars === null ? 0 : stars >= 4 ? 1 : stars <= 2 ? -1 : 0) satisfies Vote,
      rating: stars,
      moderatorReply: c.modReply || null,
      isUpdated: false,
      at: dateOf(c.created),
    };
  });

/** A bot's or server's hit (MeiliIndexedBot, MeiliIndexedServer). */
const resourceHit = (kind: 'bot' | 'server') =>
  z
    .object({
      id: snowflake,
      name: z.string(),
      shortDescription: looseText,
      ups: looseCount,
      rating: looseCount,
    })
    .transform(
      (h): SearchHit => ({
        kind,
        id: h.id,
        name: h.name,
        shortDescription: h.shortDescription ?? null,
        ups: knownCount(h.ups),
        rating: toCountOrNull(h.rating ?? null),
      }),
    );

/** A search answer: Meilisearch's own JSON (not in v3's envelope); hits of the wrong shape are left out. */
function hitsOf<T extends z.ZodType>(hit: T, max: number) {
  return z.compile(z.object({ hits: looseList(hit, max) }).transform((a) => a.hits));
}

export const MAX_SEARCH_HITS = 100;
export const v3CommentHitsSchema = hitsOf(commentHit, MAX_SEARCH_HITS);
export const v3BotHitsSchema = hitsOf(resourceHit('bot'), MAX_SEARCH_HITS);
export const v3ServerHitsSchema = hitsOf(resourceHit('server'), MAX_SEARCH_HITS);

/** v3's envelope: `{ ok: true, result }` or `{ ok: false, errors: [{ code, message }] }`. */
export const v3EnvelopeSchema = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({
    ok: z.literal(false),
    errors: z
      .array(z.object({ code: z.number().int(), message: z.string().optional().catch(undefined) }))
      .optional()
      .catch(undefined),
  }),
]);

export { text, toText };

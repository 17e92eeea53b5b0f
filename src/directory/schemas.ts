/**
 * Validation at the boundary: zod schemas for every response body, lenient where the real
 * directory is loose (unknown fields, numbers as strings, null short codes, badge of any
 * primitive type) and strict on what the bot relies on (ids, names, counts, the up result).
 * Each schema's output is already our own type. Objects are z.object (unknown fields accepted
 * and left out) rather than z.looseObject: the output is rebuilt as our type anyway, and copying
 * every unknown field on each answer was measurable in the client's per-request cost.
 */
import { z } from 'zod';
import { timestampToDate } from '../time/range.js';
import {
  attached,
  count,
  id,
  nullableId,
  openString,
  optionalCount,
  stringList,
  text,
  toAttached,
  toCount,
  toCountOrNull,
  toCountOrZero,
  toId,
  toNullableId,
  toOpenString,
  toStringList,
  toText,
} from './fields.js';
import { normalizeNextUp } from './next-up.js';
import type {
  BotReference,
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryServer,
  OkResult,
  ProfileComments,
  ResourceExtras,
  ServerUpResult,
  ShortLink,
  TokenInfo,
  ValidateBotResult,
  Vote,
} from './types.js';

/*
 * Every exported schema goes through z.compile: zod generates one checking function for the
 * whole tree ahead of time and falls back to its ordinary parser only when that says no, so a
 * valid answer costs a fraction of the interpreted walk and a rejected one gets the same
 * detailed issues.
 *
 * Field schemas only check; turning a field into our type (a string ID, null for "none", a
 * number from a numeric string) happens once per object in the object's own transform, through
 * the small functions below. A transform on every field cost more than the rest of the client
 * together (bench scenario 1: about 30 µs per answer in a process the size of the bot's, against
 * about 2 µs for checks alone), mostly in garbage for the collector.
 */
/** What v3 adds, as v1/v2 answers have it: nothing. */
const NO_EXTRAS = {
  name: null,
  avatar: null,
  owner: null,
  upCount: null,
  ratings: [],
  reviews: [],
  ups: [],
  createdAt: null,
  tagCodes: null,
} as const satisfies ResourceExtras;

export const botSchema = z.compile(
  z
    .object({
      id,
      shortCode: text,
      links: stringList,
      server: attached,
      information: z.object({
        bumps: optionalCount,
        added: optionalCount,
        prefix: text,
        permissions: optionalCount,
        tags: stringList,
        developers: stringList,
        links: z.object({ discord: text, github: text, site: text }).nullable().optional(),
        library: openString,
        shortDescription: text,
        longDescription: text,
        badge: openString,
        stats: z
          .object({ servers: optionalCount, shards: optionalCount, users: optionalCount })
          .nullable()
          .optional(),
        status: openString,
      }),
    })
    .transform((b): DirectoryBot => {
      const info = b.information;
      return {
        ...NO_EXTRAS,
        inviteLink: null,
        id: toId(b.id),
        shortCode: toText(b.shortCode),
        pageLinks: toStringList(b.links),
        supportServer: toAttached(b.server),
        bumps: toCountOrZero(info.bumps),
        added: toCountOrNull(info.added),
        prefix: toText(info.prefix),
        permissions: toCountOrNull(info.permissions),
        tags: toStringList(info.tags),
        developers: toStringList(info.developers),
        links: {
          discord: toText(info.links?.discord),
          github: toText(info.links?.github),
          site: toText(info.links?.site),
        },
        library: toOpenString(info.library),
        shortDescription: toText(info.shortDescription),
        longDescription: toText(info.longDescription),
        badge: toOpenString(info.badge),
        stats: {
          servers: toCountOrZero(info.stats?.servers),
          shards: toCountOrZero(info.stats?.shards),
          users: toCountOrZero(info.stats?.users),
        },
        status: toOpenString(info.status),
      };
    }),
);

const serverLinkKeys = ['invite', 'site', 'youtube', 'twitch', 'steam', 'vk'] as const;

export const serverSchema = z.compile(
  z
    .object({
      id,
      shortCode: text,
      status: openString,
      links: stringList,
      bot: attached,
      information: z.object({
        name: z.string(),
        avatar: text,
        members: z.array(count.nullable()).max(2).nullable().optional(),
        owner: nullableId,
        bumps: optionalCount,
        tags: stringList,
        links: z
          .object(
            Object.fromEntries(serverLinkKeys.map((k) => [k, text])) as Record<
              (typeof serverLinkKeys)[number],
              typeof text
            >,
          )
          .nullable()
          .optional(),
        shortDescription: text,
        longDescription: text,
        badge: openString,
      }),
    })
    .transform((s): DirectoryServer => {
      const info = s.information;
      const [all, online] = info.members ?? [];
      return {
        ...NO_EXTRAS,
        moderators: [],
        id: toId(s.id),
        shortCode: toText(s.shortCode),
        status: toOpenString(s.status),
        pageLinks: toStringList(s.links),
        bot: toAttached(s.bot),
        name: info.name,
        avatar: toText(info.avatar),
        members: { all: toCountOrNull(all), online: toCountOrNull(online) },
        owner: toNullableId(info.owner),
        bumps: toCountOrZero(info.bumps),
        tags: toStringList(info.tags),
        links: {
          invite: toText(info.links?.invite),
          site: toText(info.links?.site),
          youtube: toText(info.links?.youtube),
          twitch: toText(info.links?.twitch),
          steam: toText(info.links?.steam),
          vk: toText(info.links?.vk),
        },
        shortDescription: toText(info.shortDescription),
        longDescription: toText(info.longDescription),
        badge: toOpenString(info.badge),
      };
    }),
);

export const profileSchema = z.compile(
  z
    .object({
      id,
      status: text,
      badge: openString,
      shortCode: text,
      site: text,
      vk: text,
      steam: text,
      youtube: text,
      twitch: text,
      git: text,
    })
    .transform(
      (p): DirectoryProfile => ({
        id: toId(p.id),
        name: null,
        avatar: null,
        description: null,
        badges: [],
        bots: null,
        servers: null,
        telegram: null,
        donate: null,
        status: toText(p.status),
        badge: toOpenString(p.badge),
        shortCode: toText(p.shortCode),
        site: toText(p.site),
        vk: toText(p.vk),
        steam: toText(p.steam),
        youtube: toText(p.youtube),
        twitch: toText(p.twitch),
        git: toText(p.git),
      }),
    ),
);

export const commentSchema = z.compile(
  z
    .object({
      userID: id,
      text: z.string(),
      vote: count,
      isUpdated: z.boolean().optional(),
      createdAt: optionalCount,
      updatedAt: optionalCount,
    })
    .transform((c): DirectoryComment => {
      const createdAt = toCountOrNull(c.createdAt);
      const updatedAt = toCountOrNull(c.updatedAt);
      const isUpdated = c.isUpdated ?? updatedAt !== null;
      const vote = toCount(c.vote);
      return {
        userId: toId(c.userID),
        text: c.text,
        vote: (vote > 0 ? 1 : vote < 0 ? -1 : 0) satisfies Vote,
        isUpdated,
        at: timestampToDate(isUpdated ? (updatedAt ?? createdAt) : (createdAt ?? updatedAt)),
      };
    }),
);

export const commentListSchema = z.compile(z.array(commentSchema));

export const profileCommentsSchema = z.compile(
  z
    .object({
      bots: commentListSchema.nullable().optional(),
      servers: commentListSchema.nullable().optional(),
    })
    .transform((v): ProfileComments => ({ bots: v.bots ?? [], servers: v.servers ?? [] })),
);

export const botReferenceListSchema = z.compile(
  z.array(
    z
      .object({ id, shortCode: text })
      .transform((b): BotReference => ({ id: toId(b.id), shortCode: toText(b.shortCode) })),
  ),
);

export const linkListSchema = z.compile(
  z.array(
    z
      .object({
        id: count,
        code: z.string(),
        ownerID: id,
        domain: z.union([z.string(), z.number()]),
        views: optionalCount,
        link: z.string(),
        date: optionalCount,
      })
      .transform(
        (l): ShortLink => ({
          id: toCount(l.id),
          code: l.code,
          ownerId: toId(l.ownerID),
          domain: String(l.domain),
          views: toCountOrZero(l.views),
          link: l.link,
          createdAt: timestampToDate(toCountOrNull(l.date)),
        }),
      ),
  ),
);

export const okSchema = z.compile(z.object({ ok: z.boolean() }).transform((v): OkResult => ({ ok: v.ok })));

export const validateBotSchema = z.compile(okSchema.transform((v): ValidateBotResult => ({ ok: v.ok })));

export const tokenInfoSchema = z.compile(
  z.looseObject({ ok: z.boolean().optional(), type: openString }).transform(
    (v): TokenInfo => ({
      ok: v.ok ?? true,
      type: toOpenString(v.type),
      raw: { ...v, type: toOpenString(v.type) } as Record<string, unknown>,
    }),
  ),
);

/** POST /server's 200 body, built once (not per call). */
const serverUpBody = z.compile(
  z.object({
    serverID: id,
    up: count,
    updated: z.boolean(),
    bumps: optionalCount,
    boost: z.boolean().optional(),
    upSuccessfully: z.boolean().optional(),
    timeToNextUpInMs: optionalCount,
    message: z.string().nullable().optional(),
  }),
);

/** POST /server's 200 body as our type. The receive time turns a duration into an absolute time. */
export function serverUpSchema(receivedAt: number) {
  return serverUpBody.transform((r): ServerUpResult => {
    const timeToNextUpInMs = toCountOrNull(r.timeToNextUpInMs);
    return {
      serverId: toId(r.serverID),
      up: toCount(r.up),
      updated: r.updated,
      bumps: toCountOrZero(r.bumps),
      boost: r.boost ?? false,
      upSuccessfully: r.upSuccessfully ?? false,
      nextUpAt: normalizeNextUp(timeToNextUpInMs, receivedAt),
      timeToNextUpInMs,
      message: r.message ?? '',
    };
  });
}

/** The directory's usual error body. */
export const errorBodySchema = z.looseObject({
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }),
});

/** Fastify's validator / rate-limit / not-found body. */
export const fastifyErrorSchema = z.looseObject({
  statusCode: z.number().optional(),
  error: z.string().optional(),
  message: z.string().optional(),
});

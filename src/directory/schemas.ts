/**
 * Validation at the boundary: zod schemas for every response body, lenient where the real
 * directory is loose (unknown fields, numbers as strings, null short codes, badge of any
 * primitive type) and strict on what the bot relies on (ids, names, counts, the up result).
 * Each schema's output is already our own type.
 */
import { z } from 'zod';
import { normalizeNextUp } from './next-up.js';
import type {
  AttachedRef,
  BotReference,
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryServer,
  OkResult,
  ProfileComments,
  ServerUpResult,
  ShortLink,
  TokenInfo,
  ValidateBotResult,
  Vote,
} from './types.js';

/** Anything below this is taken as Unix seconds (one old sample); above, milliseconds. */
const SECONDS_THRESHOLD = 100_000_000_000;

export function timestampToDate(value: number | null | undefined): Date | null {
  if (value === null || value === undefined || !Number.isFinite(value) || value <= 0) return null;
  return new Date(value < SECONDS_THRESHOLD ? value * 1000 : value);
}

const id = z.union([z.string().min(1), z.number().int().nonnegative()]).transform(String);
const nullableId = z
  .union([z.string(), z.number().int().nonnegative(), z.null()])
  .optional()
  .transform((v) => (v === undefined || v === null || v === '' ? null : String(v)));
const text = z
  .string()
  .nullable()
  .optional()
  .transform((v) => v ?? null);
/** A status or badge: string, number or null in the wild; '' means none. */
const openString = z
  .union([z.string(), z.number(), z.boolean(), z.null()])
  .optional()
  .transform((v) => (v === undefined || v === null || v === '' || v === false ? null : String(v)));
const count = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/)
    .transform(Number),
]);
const countOrZero = count
  .nullable()
  .optional()
  .transform((v) => v ?? 0);
const countOrNull = count
  .nullable()
  .optional()
  .transform((v) => v ?? null);
const stringList = z
  .array(z.union([z.string(), z.number()]))
  .nullable()
  .optional()
  .transform((v) => (v ?? []).map(String));
const attached = z
  .looseObject({ id: nullableId, approved: z.boolean().optional() })
  .nullable()
  .optional()
  .transform((v): AttachedRef | null => (v ? { id: v.id, approved: v.approved ?? false } : null));

export const botSchema = z
  .looseObject({
    id,
    shortCode: text,
    links: stringList,
    server: attached,
    information: z.looseObject({
      bumps: countOrZero,
      added: countOrNull,
      prefix: text,
      permissions: countOrNull,
      tags: stringList,
      developers: stringList,
      links: z
        .looseObject({ discord: text, github: text, site: text })
        .nullable()
        .optional()
        .transform((v) => ({
          discord: v?.discord ?? null,
          github: v?.github ?? null,
          site: v?.site ?? null,
        })),
      library: openString,
      shortDescription: text,
      longDescription: text,
      badge: openString,
      stats: z
        .looseObject({ servers: countOrZero, shards: countOrZero, users: countOrZero })
        .nullable()
        .optional()
        .transform((v) => ({ servers: v?.servers ?? 0, shards: v?.shards ?? 0, users: v?.users ?? 0 })),
      status: openString,
    }),
  })
  .transform(
    (b): DirectoryBot => ({
      id: b.id,
      shortCode: b.shortCode,
      pageLinks: b.links,
      supportServer: b.server,
      bumps: b.information.bumps,
      added: b.information.added,
      prefix: b.information.prefix,
      permissions: b.information.permissions,
      tags: b.information.tags,
      developers: b.information.developers,
      links: b.information.links,
      library: b.information.library,
      shortDescription: b.information.shortDescription,
      longDescription: b.information.longDescription,
      badge: b.information.badge,
      stats: b.information.stats,
      status: b.information.status,
    }),
  );

const serverLinkKeys = ['invite', 'site', 'youtube', 'twitch', 'steam', 'vk'] as const;

export const serverSchema = z
  .looseObject({
    id,
    shortCode: text,
    status: openString,
    links: stringList,
    bot: attached,
    information: z.looseObject({
      name: z.string(),
      avatar: text,
      members: z
        .array(count.nullable())
        .max(2)
        .nullable()
        .optional()
        .transform((v) => ({ all: v?.[0] ?? null, online: v?.[1] ?? null })),
      owner: nullableId,
      bumps: countOrZero,
      tags: stringList,
      links: z
        .looseObject(
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
  .transform(
    (s): DirectoryServer => ({
      id: s.id,
      shortCode: s.shortCode,
      status: s.status,
      pageLinks: s.links,
      bot: s.bot,
      name: s.information.name,
      avatar: s.information.avatar,
      members: s.information.members,
      owner: s.information.owner,
      bumps: s.information.bumps,
      tags: s.information.tags,
      links: {
        invite: s.information.links?.invite ?? null,
        site: s.information.links?.site ?? null,
        youtube: s.information.links?.youtube ?? null,
        twitch: s.information.links?.twitch ?? null,
        steam: s.information.links?.steam ?? null,
        vk: s.information.links?.vk ?? null,
      },
      shortDescription: s.information.shortDescription,
      longDescription: s.information.longDescription,
      badge: s.information.badge,
    }),
  );

export const profileSchema = z
  .looseObject({
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
      id: p.id,
      status: p.status,
      badge: p.badge,
      shortCode: p.shortCode,
      site: p.site,
      vk: p.vk,
      steam: p.steam,
      youtube: p.youtube,
      twitch: p.twitch,
      git: p.git,
    }),
  );

const vote = count.transform((v): Vote => (v > 0 ? 1 : v < 0 ? -1 : 0));

export const commentSchema = z
  .looseObject({
    userID: id,
    text: z.string(),
    vote,
    isUpdated: z.boolean().optional(),
    createdAt: countOrNull,
    updatedAt: countOrNull,
  })
  .transform((c): DirectoryComment => {
    const isUpdated = c.isUpdated ?? c.updatedAt !== null;
    return {
      userId: c.userID,
      text: c.text,
      vote: c.vote,
      isUpdated,
      at: timestampToDate(isUpdated ? (c.updatedAt ?? c.createdAt) : (c.createdAt ?? c.updatedAt)),
    };
  });

export const commentListSchema = z.array(commentSchema);

export const profileCommentsSchema = z
  .looseObject({
    bots: commentListSchema.nullable().optional(),
    servers: commentListSchema.nullable().optional(),
  })
  .transform((v): ProfileComments => ({ bots: v.bots ?? [], servers: v.servers ?? [] }));

export const botReferenceListSchema = z.array(
  z
    .looseObject({ id, shortCode: text })
    .transform((b): BotReference => ({ id: b.id, shortCode: b.shortCode })),
);

export const linkListSchema = z.array(
  z
    .looseObject({
      id: count,
      code: z.string(),
      ownerID: id,
      domain: z.union([z.string(), z.number()]).transform(String),
      views: countOrZero,
      link: z.string(),
      date: countOrNull,
    })
    .transform(
      (l): ShortLink => ({
        id: l.id,
        code: l.code,
        ownerId: l.ownerID,
        domain: l.domain,
        views: l.views,
        link: l.link,
        createdAt: timestampToDate(l.date),
      }),
    ),
);

export const okSchema = z.looseObject({ ok: z.boolean() }).transform((v): OkResult => ({ ok: v.ok }));

export const validateBotSchema = okSchema.transform((v): ValidateBotResult => ({ ok: v.ok }));

export const tokenInfoSchema = z
  .looseObject({ ok: z.boolean().optional(), type: openString })
  .transform(
    (v): TokenInfo => ({ ok: v.ok ?? true, type: v.type, raw: { ...v } as Record<string, unknown> }),
  );

/** POST /server's 200 body. The receive time turns a duration into an absolute time. */
export function serverUpSchema(receivedAt: number) {
  return z
    .looseObject({
      serverID: id,
      up: count,
      updated: z.boolean(),
      bumps: countOrZero,
      boost: z.boolean().optional(),
      upSuccessfully: z.boolean().optional(),
      timeToNextUpInMs: countOrNull,
      message: z
        .string()
        .nullable()
        .optional()
        .transform((v) => v ?? ''),
    })
    .transform(
      (r): ServerUpResult => ({
        serverId: r.serverID,
        up: r.up,
        updated: r.updated,
        bumps: r.bumps,
        boost: r.boost ?? false,
        upSuccessfully: r.upSuccessfully ?? false,
        nextUpAt: normalizeNextUp(r.timeToNextUpInMs, receivedAt),
        timeToNextUpInMs: r.timeToNextUpInMs,
        message: r.message,
      }),
    );
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

// API v3 shapes of the seeded records (docs/directory-v3-sources.md §2, §3). Built on every request
// from the same state the v1/v2 routes serve, so v2 and v3 of one record can be compared. The
// variations the sources disagree on are spread deterministically over the records, by their
// position in the seed: support-server field name, premium nested or flat, ups[].expires as a string
// or a number, memberCount or members, reviews present or not.

import { type BotData, type CommentData, type EmulatorState, IDS, type ServerData } from '../state.js';

type Json = Record<string, unknown>;

/** docs-v3 bots.mdx "Library". */
export const V3_LIBRARIES: Readonly<Record<string, number>> = {
  discord4j: 1,
  discordcr: 2,
  discordgo: 3,
  discordoo: 4,
  dsharpplus: 5,
  'discord.js': 6,
  'discord.net': 7,
  discordpy: 8,
  eris: 9,
  javacord: 10,
  jda: 11,
  other: 12,
};

/** v2 tag names -> docs-v3 bot tag codes (0 Moderation … 13 AI). */
const BOT_TAGS: Readonly<Record<string, number>> = {
  модерация: 0,
  комбайн: 1,
  утилиты: 2,
  мониторинг: 2,
  экономика: 5,
  приветствия: 9,
};

/** v2 tag names -> docs-v3 server tag codes (130 Chatting … 167 Brawl Stars). */
const SERVER_TAGS: Readonly<Record<string, number>> = {
  общение: 130,
  комьюнити: 130,
  сообщество: 130,
  игры: 132,
  аниме: 134,
  'дискорд боты': 136,
};

/** ResourceStatus: 0 Hidden, 1 Public, 2 Banned, 3 Pending. */
const BOT_STATUS_OVERRIDES: Readonly<Record<string, number>> = {
  [IDS.privateBot]: 0,
  '900000000000000011': 2,
  '900000000000000012': 3,
};

const BOT_NAMES: Readonly<Record<string, string>> = {
  [IDS.plainBot]: 'Kerdoku',
  [IDS.serviceBot]: 'BotiCord',
  [IDS.privateBot]: 'Private Helper',
};

const UPS_EXPIRE_BASE = 1_685_262_170_000;
const MOD_REPLY = 'Спасибо за отзыв!';

/** Discord snowflake -> epoch ms. */
export function snowflakeTime(id: string): number {
  try {
    return Number(BigInt(id) >> 22n) + 1_420_070_400_000;
  } catch {
    return 0;
  }
}

export function isSnowflake(id: string): boolean {
  return /^\d{17,20}$/.test(id);
}

// --- comments / reviews ---------------------------------------------------------------------

export interface V3Comment {
  id: string;
  author: string;
  content: string;
  rating: number;
  resource: string;
  created: number;
  modReply: string | null;
}

/** v2 vote (-1/0/1) -> a 1–5 rating that reads back to the same vote (4–5: 1, 3: 0, 1–2: -1). */
function ratingOf(c: CommentData, k: number): number {
  if (c.vote > 0) return k % 2 === 0 ? 5 : 4;
  if (c.vote < 0) return k % 2 === 0 ? 1 : 2;
  return 3;
}

function commentTime(c: CommentData): number {
  const t = c.createdAt ?? c.updatedAt ?? 0;
  return t < 1e12 ? t * 1000 : t;
}

export function commentsOf(state: EmulatorState, resource: string): V3Comment[] {
  const list = state.comments.bots.get(resource) ?? state.comments.servers.get(resource) ?? [];
  return list.map((c, k) => ({
    id: `${resource}-${k + 1}`,
    author: c.userID,
    content: c.text,
    rating: ratingOf(c, k),
    resource,
    created: commentTime(c),
    modReply: k % 3 === 2 ? MOD_REPLY : null,
  }));
}

export function allComments(state: EmulatorState): V3Comment[] {
  const ids = [...state.comments.bots.keys(), ...state.comments.servers.keys()];
  return ids.flatMap((id) => commentsOf(state, id));
}

function ratings(comments: readonly V3Comment[]): { count: number; rating: number }[] {
  const counts = new Map<number, number>();
  for (const c of comments) counts.set(c.rating, (counts.get(c.rating) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[0] - a[0]).map(([rating, count]) => ({ count, rating }));
}

function averageRating(comments: readonly V3Comment[]): number {
  if (comments.length === 0) return 0;
  const sum = comments.reduce((s, c) => s + c.rating, 0);
  return Math.round((sum / comments.length) * 10) / 10;
}

function reviews(state: EmulatorState, comments: readonly V3Comment[]): Json[] {
  return comments.map((c) => ({
    id: c.id,
    author: partialUser(state, c.author),
    content: c.content,
    createdDate: new Date(c.created).toISOString(),
    modReply: c.modReply,
    rating: c.rating,
  }));
}

// --- users ----------------------------------------------------------------------------------

const BADGES: Readonly<Record<string, { id: number; name: string }>> = {
  STAFF: { id: 1, name: 'Staff' },
  DEVELOPER: { id: 2, name: 'Developer' },
};

/** PartialUser: UserProfile without badges, bots and servers. Unknown users get a stand-in. */
export function partialUser(state: EmulatorState, id: string): Json {
  const p = state.profiles.get(id);
  if (p === undefined) {
    return {
      username: `user${id.slice(-4)}`,
      discriminator: '0',
      avatar: null,
      id,
      socials: { vk: null, telegram: null, donate: null, git: null, custom: null },
      description: null,
      shortDescription: null,
      status: null,
      shortDomain: null,
    };
  }
  const even = Number(id.slice(-1)) % 2 === 0;
  return {
    username: p.shortCode,
    discriminator: '0',
    avatar: even ? `https://cdn.discordapp.com/avatars/${id}/0a1b2c3d4e5f60718293a4b5c6d7e8f9.png` : null,
    id,
    socials: {
      vk: p.vk,
      telegram: p.id === IDS.profileUser ? 'cipherka' : null,
      donate: p.id === IDS.profileUser ? 'https://boosty.to/cipherka' : null,
      git: p.git,
      custom: p.site,
    },
    description: p.status === '' ? null : p.status,
    shortDescription: p.status === '' ? null : p.status.slice(0, 60),
    status: null,
    shortDomain: p.shortCode,
  };
}

export function userResource(state: EmulatorState, id: string): Json | undefined {
  const p = state.profiles.get(id);
  if (p === undefined) return undefined;
  const badge = p.badge === null ? undefined : BADGES[p.badge];
  return {
    ...partialUser(state, id),
    badges:
      badge === undefined
        ? []
        : [{ ...badge, assetURL: `https://boticord.top/badges/${badge.name.toLowerCase()}.png` }],
    bots: [...state.bots.values()].filter((b) => botOwner(b) === id).map((b) => botResource(state, b)),
    servers: [...state.servers.values()]
      .filter((s) => serverOwner(s) === id)
      .map((s) => serverResource(state, s)),
  };
}

// --- bots -----------------------------------------------------------------------------------

function indexOf<T>(map: Map<string, T>, id: string): number {
  let k = 0;
  for (const key of map.keys()) {
    if (key === id) return k;
    k += 1;
  }
  return k;
}

export function botOwner(b: BotData): string {
  return b.information.developers[0] ?? '';
}

export function botName(b: BotData): string {
  const named = BOT_NAMES[b.id];
  if (named !== undefined) return named;
  const m = b.shortCode === null ? null : /^([a-z]+)(\d+)$/.exec(b.shortCode);
  if (m?.[1] !== undefined) return `${m[1].charAt(0).toUpperCase()}${m[1].slice(1)} ${m[2]}`;
  return b.shortCode ?? `Bot ${b.id.slice(-4)}`;
}

function botAvatar(b: BotData): string | null {
  return b.id === IDS.privateBot
    ? null
    : `https://cdn.discordapp.com/avatars/${b.id}/9f8e7d6c5b4a39281706f5e4d3c2b1a0.png`;
}

function botInvite(b: BotData): string {
  return `https://discord.com/oauth2/authorize?client_id=${b.id}&scope=bot%20applications.commands&permissions=${b.information.permissions}`;
}

function upsOf(id: string, bumps: number, k: number): { id: string; expires: string | number }[] {
  return Array.from({ length: Math.min(bumps, 3) }, (_, n) => {
    const expires = UPS_EXPIRE_BASE + k * 86_400_000 + n * 3_600_000;
    return { id: `up${id.slice(-6)}${n + 1}`, expires: k % 2 === 0 ? String(expires) : expires };
  });
}

function premium(k: number, active: boolean, nested: boolean): Json {
  const splash = active ? 'https://boticord.top/premium/splash.png' : null;
  const banner = active ? 'https://boticord.top/premium/banner.png' : null;
  return nested
    ? {
        premium: { active, splashURL: splash, autoFetch: active, bannerURL: banner },
        standardBannerID: k % 6,
      }
    : {
        premiumActive: active,
        premiumSplashURL: splash,
        premiumAutoFetch: active,
        premiumBannerURL: banner,
        standardBannerID: k % 6,
      };
}

function tagCodes(tags: readonly string[], table: Readonly<Record<string, number>>): number[] {
  const out: number[] = [];
  for (const t of tags) {
    const code = table[t];
    if (code !== undefined && !out.includes(code)) out.push(code);
  }
  return out;
}

export function botResource(state: EmulatorState, b: BotData): Json {
  const k = indexOf(state.bots, b.id);
  const info = b.information;
  const comments = commentsOf(state, b.id);
  const code = info.links.discord;
  const support =
    k % 3 === 0
      ? { supportServerInviteLink: code === null ? null : `https://discord.gg/${code}` }
      : k % 3 === 1
        ? { supportServerInviteCode: code }
        : { support_server_invite: code };
  const { servers, shards, users } = info.stats;
  return {
    id: b.id,
    name: botName(b),
    shortDescription: info.shortDescription ?? '',
    description: info.longDescription ?? info.shortDescription ?? '',
    avatar: botAvatar(b),
    shortLink: b.shortCode,
    inviteLink: botInvite(b),
    ...premium(k, info.badge === 'STAFF', k % 2 === 0),
    owner: botOwner(b),
    status: BOT_STATUS_OVERRIDES[b.id] ?? 1,
    ratings: ratings(comments),
    prefix: info.prefix,
    discriminator: '0',
    createdDate: new Date(snowflakeTime(b.id)).toISOString(),
    ...support,
    library: info.library === null ? null : (V3_LIBRARIES[info.library] ?? 12),
    ...(servers > 0 ? { guilds: servers } : {}),
    ...(shards > 0 ? { shards } : {}),
    ...(users > 0 ? { members: users } : {}),
    website: info.links.site,
    tags: tagCodes(info.tags, BOT_TAGS),
    developers: info.developers.map((id) => partialUser(state, id)),
    upCount: info.bumps,
    ups: upsOf(b.id, info.bumps, k),
    ...(k % 2 === 0 && comments.length > 0 ? { reviews: reviews(state, comments) } : {}),
  };
}

// --- servers --------------------------------------------------------------------------------

export function serverOwner(s: ServerData): string {
  return s.information.owner ?? IDS.serviceBotOwner;
}

export function serverResource(state: EmulatorState, s: ServerData): Json {
  const k = indexOf(state.servers, s.id);
  const info = s.information;
  const comments = commentsOf(state, s.id);
  const owner = serverOwner(s);
  const moderators = s.id === IDS.serverFresh ? [owner, IDS.plainBotOwner] : owner === '' ? [] : [owner];
  const nested = k % 2 === 0;
  return {
    id: s.id,
    name: info.name,
    shortDescription: info.shortDescription ?? '',
    description: info.longDescription ?? info.shortDescription ?? '',
    avatar: info.avatar === '' ? null : info.avatar,
    shortLink: s.shortCode,
    invite: info.links.invite,
    inviteLink: info.links.invite,
    rating: averageRating(comments),
    // py and kt read memberCount with nested premium; java reads members with flat premium.
    ...(nested ? { memberCount: info.members[0] } : { members: info.members[0] }),
    ...premium(k, state.boostedServers.has(s.id), nested),
    bannerURL: null,
    owner,
    status: s.status === 'NEW' ? 3 : 1,
    ratings: ratings(comments),
    createdDate: new Date(snowflakeTime(s.id)).toISOString(),
    website: info.links.site,
    tags: tagCodes(info.tags, SERVER_TAGS),
    moderators: moderators.map((id) => partialUser(state, id)),
    upCount: info.bumps,
    ups: upsOf(s.id, info.bumps, k),
    ...(k % 2 === 0 && comments.length > 0 ? { reviews: reviews(state, comments) } : {}),
  };
}

// --- search documents (MeiliIndexed*) ---------------------------------------------------------

export function indexedBot(state: EmulatorState, b: BotData): Json & { id: string } {
  const r = botResource(state, b);
  const comments = commentsOf(state, b.id);
  const { servers, shards, users } = b.information.stats;
  return {
    id: b.id,
    name: botName(b),
    discriminator: '0',
    description: r.description,
    shortDescription: r.shortDescription,
    invite: r.inviteLink,
    avatar: r.avatar,
    premiumActive: b.information.badge === 'STAFF',
    premiumBanner: null,
    ups: b.information.bumps,
    created: snowflakeTime(b.id),
    rating: averageRating(comments),
    banner: r.standardBannerID,
    ...(users > 0 ? { members: users } : {}),
    ...(servers > 0 ? { guilds: servers } : {}),
    ...(shards > 0 ? { shards } : {}),
    tags: r.tags,
  };
}

export function indexedServer(state: EmulatorState, s: ServerData): Json & { id: string } {
  const r = serverResource(state, s);
  return {
    id: s.id,
    name: s.information.name,
    description: r.description,
    shortDescription: r.shortDescription,
    invite: s.information.links.invite,
    avatar: r.avatar,
    premiumActive: state.boostedServers.has(s.id),
    ups: s.information.bumps,
    created: snowflakeTime(s.id),
    rating: r.rating,
    members: s.information.members[0],
    banner: r.standardBannerID,
    discordBanner: null,
    tags: r.tags,
  };
}

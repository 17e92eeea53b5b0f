/**
 * Our own types for what the directory returns. Nothing past the client sees raw JSON:
 * every response is validated (see schemas.ts) and mapped into these shapes.
 */

export type { ApiVersion } from './versions.js';
export type TokenKind = 'Bot' | 'PrivateBot' | 'Profile';
export const TOKEN_KINDS: readonly TokenKind[] = ['Bot', 'PrivateBot', 'Profile'];

/** A status or badge value: the directory uses SCREAMING_CASE strings; SDKs disagree, so numbers become strings. */
export type OpenString = string | null;

export interface AttachedRef {
  id: string | null;
  approved: boolean;
}

export interface BotLinks {
  discord: string | null;
  github: string | null;
  site: string | null;
}

/** A bot's counts; null where the directory does not know one (v3 leaves them out). */
export interface BotStats {
  servers: number | null;
  shards: number | null;
  users: number | null;
}

/** How many gave a resource each rating (v3 `ratings[]`): `rating` 1 to 5. */
export interface RatingCount {
  rating: number;
  count: number;
}

/** A review of a bot or server (v3: boticordjava 6.1.0's `reviews[]`, not in the docs). */
export interface DirectoryReview {
  id: string | null;
  authorId: string | null;
  /** The author's name as the directory has it (free text). */
  authorName: string | null;
  /** 1 to 5, when given. */
  rating: number | null;
  text: string;
  at: Date | null;
  /** The moderators' answer, when there is one. */
  moderatorReply: string | null;
}

/** One up that still counts (v3 `ups[]`): an up's points expire, 14 days after it was given. */
export interface DirectoryUp {
  id: string | null;
  expiresAt: Date | null;
}

/**
 * What v3 adds to a bot or a server, empty in v1/v2: the directory's own name and avatar, the
 * up count, ratings, reviews, ups still counting, when it was added, and the tags as codes (the
 * card names them in the reader's language).
 */
export interface ResourceExtras {
  name: string | null;
  /** An http(s) URL (the directory's, or Discord's CDN built from an avatar hash). */
  avatar: string | null;
  owner: string | null;
  upCount: number | null;
  ratings: RatingCount[];
  reviews: DirectoryReview[];
  ups: DirectoryUp[];
  createdAt: Date | null;
  /** v3's numeric tags (docs-v3 bots.mdx and servers.mdx "Tags"); null in v1/v2, where `tags` are names. */
  tagCodes: number[] | null;
}

export interface DirectoryBot extends Omit<ResourceExtras, 'name' | 'avatar' | 'owner'> {
  id: string;
  /** The bot's name (v3); v1/v2 have none, Discord does. */
  name: string | null;
  avatar: string | null;
  /** The account that owns the bot on the directory (v3). */
  owner: string | null;
  /** The bot's invite link (v3 `inviteLink`). */
  inviteLink: string | null;
  shortCode: string | null;
  /** Page URLs of the bot on the directory's domains. */
  pageLinks: string[];
  /** The bot's support server, when the directory says (not in the spec). */
  supportServer: AttachedRef | null;
  bumps: number;
  /** `information.added` as sent; the public material disagrees on whether it is a count or a time. */
  added: number | null;
  prefix: string | null;
  permissions: number | null;
  tags: string[];
  developers: string[];
  links: BotLinks;
  library: string | null;
  shortDescription: string | null;
  longDescription: string | null;
  badge: OpenString;
  stats: BotStats;
  status: OpenString;
}

export interface ServerLinks {
  invite: string | null;
  site: string | null;
  youtube: string | null;
  twitch: string | null;
  steam: string | null;
  vk: string | null;
}

export interface DirectoryServer extends Omit<ResourceExtras, 'name' | 'avatar' | 'owner'> {
  id: string;
  /** Moderators' user IDs (v3). */
  moderators: string[];
  shortCode: string | null;
  status: OpenString;
  pageLinks: string[];
  /** The bot attached to the server, when the directory says (not in the spec). */
  bot: AttachedRef | null;
  name: string;
  avatar: string | null;
  members: { all: number | null; online: number | null };
  /** Owner as sent: an ID in some versions, a tag in others, missing in the real sample. */
  owner: string | null;
  bumps: number;
  tags: string[];
  links: ServerLinks;
  shortDescription: string | null;
  longDescription: string | null;
  badge: OpenString;
}

export interface DirectoryProfile {
  id: string;
  /** The user's name on the directory (v3 `username`). */
  name: string | null;
  avatar: string | null;
  /** Free text written by the user. */
  status: string | null;
  /** The user's description (v3 `shortDescription`, else `description`). */
  description: string | null;
  /** Badge names (v3 `badges[]`). */
  badges: string[];
  /** The user's bots and servers as the profile lists them (v3); null where it does not (v1/v2). */
  bots: BotReference[] | null;
  servers: ServerReference[] | null;
  telegram: string | null;
  donate: string | null;
  badge: OpenString;
  shortCode: string | null;
  site: string | null;
  vk: string | null;
  steam: string | null;
  youtube: string | null;
  twitch: string | null;
  git: string | null;
}

export type Vote = -1 | 0 | 1;

export interface DirectoryComment {
  userId: string;
  text: string;
  /** v1/v2's vote; on v3 derived from the rating (4–5: 1, 3: 0, 1–2: -1). */
  vote: Vote;
  /** v3's rating, 1 to 5; absent or null in v1/v2. */
  rating?: number | null;
  /** The moderators' answer (v3 `modReply`). */
  moderatorReply?: string | null;
  isUpdated: boolean;
  /** createdAt, or updatedAt when isUpdated; normalized to ms (one old sample used seconds). */
  at: Date | null;
}

export interface ProfileComments {
  bots: DirectoryComment[];
  servers: DirectoryComment[];
  /** v3: comments whose subject the directory does not say (its search index holds no kind). */
  other?: DirectoryComment[];
}

export interface BotReference {
  id: string;
  shortCode: string | null;
  /** The bot's name, where the directory gives it (v3). */
  name?: string | null;
}

export interface ServerReference {
  id: string;
  shortCode: string | null;
  name: string | null;
}

/** A search hit (v3's search service): a bot or a server. */
export interface SearchHit {
  kind: 'bot' | 'server';
  id: string;
  name: string;
  shortDescription: string | null;
  /** Ups counting now. */
  ups: number | null;
  rating: number | null;
}

export type LinkDomainCode = 1 | 2 | 3;

export interface ShortLink {
  id: number;
  code: string;
  ownerId: string;
  /** Host name as the directory returns it, e.g. `bcord.cc`. */
  domain: string;
  views: number;
  link: string;
  createdAt: Date | null;
}

export interface OkResult {
  ok: boolean;
}

/** What POST /server may tell of a server besides the up itself; each field is optional. */
export interface ServerStatistics {
  name?: string;
  avatar?: string;
  membersAll?: number;
  membersOnline?: number;
  ownerId?: string;
  ownerTag?: string;
}

export interface ServerUpdate extends ServerStatistics {
  serverId: string;
  /** true: also register an up if possible (up = 1); false: statistics only (up = 0). */
  up: boolean;
  /** true when the bot is on the server (status = 1); false when it left (status = 0). */
  botPresent: boolean;
  upUserId: string;
  upChannelId: string;
  upChannelName: string;
}

export interface ServerUpResult {
  serverId: string;
  up: number;
  updated: boolean;
  bumps: number;
  boost: boolean;
  upSuccessfully: boolean;
  /** When the next up is possible, normalized from `timeToNextUpInMs` (see next-up.ts). */
  nextUpAt: Date | null;
  /** The raw `timeToNextUpInMs` as sent. */
  timeToNextUpInMs: number | null;
  /** Ready-made text for the user, shown as given. */
  message: string;
}

/**
 * What POST /stats sends. v1/v2 take all three; v3 takes each it is given and a count left out
 * is not changed (0 is refused: boticordpy, "None of the values must be equal to 0"), and needs
 * the bot's ID for its route.
 */
export interface BotStatsUpdate {
  servers?: number | undefined;
  shards?: number | undefined;
  users?: number | undefined;
  /** The bot's ID (v3's route names it). */
  botId?: string;
}

export interface ValidateBotResult {
  ok: boolean;
}

export interface TokenInfo {
  ok: boolean;
  /** Token kind as the directory reports it, when it does. */
  type: string | null;
  raw: Record<string, unknown>;
}

/**
 * Our own types for what the directory returns. Nothing past the client sees raw JSON:
 * every response is validated (see schemas.ts) and mapped into these shapes.
 */

export type ApiVersion = 'v1' | 'v2';
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

export interface BotStats {
  servers: number;
  shards: number;
  users: number;
}

export interface DirectoryBot {
  id: string;
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

export interface DirectoryServer {
  id: string;
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
  /** Free text written by the user. */
  status: string | null;
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
  vote: Vote;
  isUpdated: boolean;
  /** createdAt, or updatedAt when isUpdated; normalized to ms (one old sample used seconds). */
  at: Date | null;
}

export interface ProfileComments {
  bots: DirectoryComment[];
  servers: DirectoryComment[];
}

export interface BotReference {
  id: string;
  shortCode: string | null;
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

export interface BotStatsUpdate {
  servers: number;
  shards: number;
  users: number;
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

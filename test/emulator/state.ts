// Seed data and mutable state of the directory emulator.
// Records marked "sample" are copied value-for-value from test/fixtures/directory-samples (real
// response bodies); everything else is constructed to exercise what the samples cannot
// (a server in cooldown, a boosted server, a bot without shortCode, > 10 comments for paging).

export interface CommentData {
  userID: string;
  text: string;
  vote: number;
  isUpdated: boolean;
  createdAt?: number;
  updatedAt?: number;
}

export interface BotData {
  id: string;
  shortCode: string | null;
  links: string[];
  /** Not in the spec, present in real answers: the bot's support server. */
  server?: { id: string | null; approved: boolean };
  information: {
    bumps: number;
    added: number;
    prefix: string;
    permissions: number;
    tags: string[];
    developers: string[];
    links: { discord: string | null; github: string | null; site: string | null };
    library: string | null;
    shortDescription: string | null;
    longDescription: string | null;
    badge: string | null;
    stats: { servers: number; shards: number; users: number };
    status: string;
  };
}

export interface ServerData {
  id: string;
  shortCode: string | null;
  status: string;
  links: string[];
  /** Not in the spec, present in real answers. */
  bot?: { id: string | null; approved: boolean };
  information: {
    name: string;
    avatar: string;
    members: [number, number];
    /** Listed by the spec but missing from the real sample; kept absent there. */
    owner?: string;
    bumps: number;
    tags: string[];
    links: {
      invite: string | null;
      site: string | null;
      youtube: string | null;
      twitch: string | null;
      steam: string | null;
      vk: string | null;
    };
    shortDescription: string | null;
    longDescription: string | null;
    badge: string | null;
  };
}

export interface ProfileData {
  id: string;
  status: string;
  badge: string | null;
  shortCode: string;
  site: string | null;
  vk: string | null;
  steam: string | null;
  youtube: string | null;
  twitch: string | null;
  git: string | null;
}

export interface LinkData {
  id: number;
  code: string;
  ownerID: string;
  domain: string;
  views: number;
  link: string;
  date: number;
}

export interface TokenInfo {
  type: 'bot' | 'profile';
  /** User who owns the token (the bot's developer for bot tokens). */
  ownerId: string;
  /** Bot the token belongs to; null for profile tokens. */
  botId: string | null;
  /** Service bots may use the Bot kind on POST /server. */
  serviceBot: boolean;
  /** Servers this token may update with the PrivateBot kind. */
  privateServers: readonly string[];
}

export interface EmulatorState {
  bots: Map<string, BotData>;
  servers: Map<string, ServerData>;
  profiles: Map<string, ProfileData>;
  /** Comments keyed by the id of the bot / server they are about. Profile comments are derived. */
  comments: { bots: Map<string, CommentData[]>; servers: Map<string, CommentData[]> };
  links: LinkData[];
  nextLinkId: number;
  tokens: Map<string, TokenInfo>;
  /** Server id -> epoch ms of its last successful up (the cooldown is measured from it). */
  ups: Map<string, number>;
  /** Servers whose up adds 2 bumps and answers boost: true. */
  boostedServers: Set<string>;
  /** Server id -> explanation; POST /server on it answers updated: false with that message. */
  notUpdatedServers: Map<string, string>;
  /** Server id -> ids of the bots that are on it (POST /server status, validateBot). */
  botsOnServers: Map<string, Set<string>>;
  /** Server id -> owner tag last sent by POST /server (the answer has no field for it). */
  serverOwnerTags: Map<string, string>;
  /** API v3: keys, search keys, recorded stats, added search documents. */
  v3: V3State;
}

/** The last POST /v3/bots/:id/stats that was accepted for a bot (only the counts it sent). */
export interface V3StatsRecord {
  servers?: number;
  shards?: number;
  members?: number;
  /** The account key that posted them. */
  key: string;
  /** The raw body as received. */
  body: string;
  at: number;
}

export type V3IndexName = 'bots' | 'servers' | 'comments';
export type SearchDocument = Record<string, unknown> & { id: string };

export interface V3State {
  /** API key -> id of the account (user) that generated it. */
  keys: Map<string, string>;
  /** Valid search key -> the API key it was issued to. */
  searchKeys: Map<string, string>;
  /** Bumped by each rotation; part of every search key issued. */
  searchKeyGeneration: number;
  /** Bot id -> last accepted stats post. */
  stats: Map<string, V3StatsRecord>;
  /** Documents added by tests, searched after the ones derived from the seed. */
  documents: Record<V3IndexName, SearchDocument[]>;
}

export const LINK_DOMAINS: Readonly<Record<number, string>> = {
  1: 'bcord.cc',
  2: 'myservers.me',
  3: 'discord.camp',
};

export const IDS = {
  /** The directory's own bot (sample developer-bots.json); the service bot token. */
  serviceBot: '672406367344132116',
  serviceBotOwner: '178404926869733376',
  /** Sample bot.json (kerdoku); an ordinary bot. */
  plainBot: '724663360934772797',
  plainBotOwner: '585766846268047370',
  /** Constructed private bot; shortCode null. */
  privateBot: '1029384756102938475',
  privateBotOwner: '595939165917544460',
  /** Owner of the profile token (sample profile.json, cipherka). */
  profileUser: '178404926869733376',
  /** Owner of the other profile token; developer of many bots. */
  otherProfileUser: '595939165917544460',
  /** Writes > 10 comments (GET /profile/:id/comments paging). */
  prolificUser: '525366699969478676',
  /** Sample server.json (boticord): no up yet, not boosted. */
  serverFresh: '722424773233213460',
  /** Last up 5 s before the seed time: in cooldown. */
  serverCooldown: '935101411530891304',
  /** Boosted (+2 per up), shortCode null, no up yet. */
  serverBoosted: '940315402157236224',
  /** POST /server answers updated: false. */
  serverNotUpdated: '951240098420256788',
  /** Bot with > 10 comments (GET /bot/:id/comments paging). */
  botManyComments: '672406367344132116',
  /** Bot with shortCode null. */
  botNullShortCode: '1029384756102938475',
} as const;

export const TOKENS = {
  serviceBot: 'emu-bot-service-5b1f0c7e9a2d4e68b3c1',
  plainBot: 'emu-bot-plain-8d2e4a6c1f3b5d7e9a0c',
  privateBot: 'emu-bot-private-3c5e7a9b1d2f4e6a8c0b',
  profile: 'emu-profile-cipherka-7e9a1c3b5d2f4a6c',
  otherProfile: 'emu-profile-other-2f4a6c8e0b1d3e5a7c',
} as const;

/**
 * API v3 keys (bare in Authorization). A key belongs to an account: bots and servers are owned by the
 * first developer of a bot / the server's owner (the sample server, which has no owner in v2, by
 * IDS.serviceBotOwner in v3).
 */
export const V3_KEYS = {
  /** Account IDS.otherProfileUser: the private bot, the twelve filler bots and three constructed servers. */
  owner: 'emu-v3-owner-4b8d2f6a1c3e5a7b9d0f',
  /** Account IDS.plainBotOwner: the plain bot (kerdoku). */
  kerdoku: 'emu-v3-kerdoku-9a1c3e5b7d2f4a6c8e0b',
  /** Account IDS.serviceBotOwner (= IDS.profileUser): the service bot and the sample server. */
  staff: 'emu-v3-staff-6c8e0a2b4d1f3a5c7e9b',
  /** Account IDS.prolificUser: owns nothing (403 ResourceNotOwned on any stats post). */
  stranger: 'emu-v3-stranger-1d3f5a7c9e0b2d4f6a8c',
} as const;

/** The account behind each V3_KEYS entry. */
export const V3_KEY_OWNERS: Readonly<Record<keyof typeof V3_KEYS, string>> = {
  owner: IDS.otherProfileUser,
  kerdoku: IDS.plainBotOwner,
  staff: IDS.serviceBotOwner,
  stranger: IDS.prolificUser,
};

function seedV3(): V3State {
  const keys = new Map<string, string>();
  for (const name of Object.keys(V3_KEYS) as (keyof typeof V3_KEYS)[]) {
    keys.set(V3_KEYS[name], V3_KEY_OWNERS[name]);
  }
  return {
    keys,
    searchKeys: new Map(),
    searchKeyGeneration: 1,
    stats: new Map(),
    documents: { bots: [], servers: [], comments: [] },
  };
}

/** The five servers the privateBot token may update with the PrivateBot kind. */
export const PRIVATE_BOT_SERVERS: readonly string[] = [
  IDS.serverCooldown,
  IDS.serverBoosted,
  '961000000000000001',
  '961000000000000002',
  '961000000000000003',
];

/** The cooldown of the seeded server in cooldown started this long before the seed time. */
export const SEED_COOLDOWN_AGE_MS = 5_000;

export const NOT_UPDATED_SEED_MESSAGE =
  ':x: Информация о сервере не обновлена: сервер заблокирован на мониторинге. Обратитесь в поддержку.';

const FILLER_BOT_COUNT = 12;
const MANY_COMMENTS_COUNT = 15;

function botLinks(id: string, shortCode: string | null): string[] {
  const refs = shortCode === null ? [id] : [id, shortCode];
  return refs.flatMap((ref) => [
    `https://boticord.top/bot/${ref}`,
    `https://bcord.cc/b/${ref}`,
    `https://myservers.me/b/${ref}`,
  ]);
}

export function serverLinks(id: string, shortCode: string | null): string[] {
  const refs = shortCode === null ? [id] : [id, shortCode];
  return refs.flatMap((ref) => [
    `https://boticord.top/server/${ref}`,
    `https://bcord.cc/s/${ref}`,
    `https://myservers.me/s/${ref}`,
  ]);
}

function sampleBot(): BotData {
  return {
    id: '724663360934772797',
    shortCode: 'kerdoku',
    links: botLinks('724663360934772797', 'kerdoku'),
    server: { id: '724668798874943529', approved: true },
    information: {
      bumps: 37,
      added: 1091,
      prefix: '?',
      permissions: 1544023111,
      tags: ['комбайн', 'экономика', 'модерация', 'приветствия'],
      developers: ['585766846268047370'],
      links: { discord: '5qXgJvr', github: null, site: 'https://kerdoku.top' },
      library: 'discordpy',
      shortDescription: 'Удобный и дружелюбный бот, который имеет крутой функционал!',
      longDescription: 'wow',
      badge: null,
      stats: { servers: 2558, shards: 3, users: 348986 },
      status: 'APPROVED',
    },
  };
}

function serviceBot(): BotData {
  return {
    id: IDS.serviceBot,
    shortCode: 'sonata',
    links: botLinks(IDS.serviceBot, 'sonata'),
    server: { id: '722424773233213460', approved: true },
    information: {
      bumps: 120,
      added: 5400,
      prefix: '/',
      permissions: 537159744,
      tags: ['мониторинг', 'утилиты'],
      developers: [IDS.serviceBotOwner],
      links: {
        discord: 'hkHjW8a',
        github: 'https://github.com/boticord/sonata',
        site: 'https://boticord.top/',
      },
      library: 'discord.js',
      shortDescription: 'Официальный бот мониторинга: поднимает серверы командой /up.',
      longDescription: 'Поднимайте сервер раз в несколько часов и следите за отзывами.',
      badge: 'STAFF',
      stats: { servers: 15230, shards: 8, users: 2104331 },
      status: 'APPROVED',
    },
  };
}

function privateBot(): BotData {
  return {
    id: IDS.privateBot,
    shortCode: null,
    links: botLinks(IDS.privateBot, null),
    server: { id: null, approved: false },
    information: {
      bumps: 0,
      added: 3,
      prefix: '!',
      permissions: 0,
      tags: [],
      developers: [IDS.privateBotOwner],
      links: { discord: null, github: null, site: null },
      library: null,
      shortDescription: null,
      longDescription: null,
      badge: null,
      stats: { servers: 0, shards: 0, users: 0 },
      status: 'APPROVED',
    },
  };
}

function fillerBotId(i: number): string {
  return `9000000000000000${String(i).padStart(2, '0')}`;
}

function fillerBot(i: number): BotData {
  const id = fillerBotId(i);
  const shortCode = `filler${i}`;
  return {
    id,
    shortCode,
    links: botLinks(id, shortCode),
    server: { id: null, approved: false },
    information: {
      bumps: i * 3,
      added: 10 + i,
      prefix: `f${i}!`,
      permissions: 2048,
      tags: ['утилиты'],
      developers: [IDS.otherProfileUser],
      links: { discord: null, github: `https://git.sqdsh.top/filler${i}`, site: null },
      library: 'discord.js',
      shortDescription: `Тестовый бот №${i}`,
      longDescription: null,
      badge: null,
      stats: { servers: i * 10, shards: 1, users: i * 1000 },
      status: 'APPROVED',
    },
  };
}

function sampleServer(): ServerData {
  return {
    id: '722424773233213460',
    shortCode: 'boticord',
    status: 'ACCEPT_MEMBERS',
    links: serverLinks('722424773233213460', 'boticord'),
    bot: { id: null, approved: false },
    information: {
      name: 'BotiCord Community',
      avatar: 'https://cdn.discordapp.com/icons/722424773233213460/060188f770836697846710b109272e4c.webp',
      members: [438, 0],
      bumps: 62,
      tags: [
        'аниме',
        'игры',
        'поддержка',
        'комьюнити',
        'сообщество',
        'discord',
        'дискорд сервера',
        'дискорд боты',
      ],
      links: {
        invite: 'hkHjW8a',
        site: 'https://boticord.top/',
        youtube: null,
        twitch: null,
        steam: null,
        vk: null,
      },
      shortDescription: 'short text',
      longDescription: 'long text',
      badge: 'STAFF',
    },
  };
}

function constructedServer(
  id: string,
  shortCode: string | null,
  name: string,
  bumps: number,
  extra: Partial<ServerData['information']> = {},
): ServerData {
  return {
    id,
    shortCode,
    status: 'ACCEPT_MEMBERS',
    links: serverLinks(id, shortCode),
    bot: { id: null, approved: false },
    information: {
      name,
      avatar: `https://cdn.discordapp.com/icons/${id}/a_0f1e2d3c4b5a69788796a5b4c3d2e1f0.gif`,
      members: [1200, 140],
      owner: IDS.otherProfileUser,
      bumps,
      tags: ['общение', 'игры'],
      links: { invite: 'tavern42', site: null, youtube: null, twitch: null, steam: null, vk: null },
      shortDescription: `${name}: короткое описание`,
      longDescription: null,
      badge: null,
      ...extra,
    },
  };
}

function sampleProfile(): ProfileData {
  return {
    id: '178404926869733376',
    status: '"Если вы не разделяете мою точку зрения, поздравляю — вам больше достанется." © Артемий Лебедев',
    badge: 'STAFF',
    shortCode: 'cipherka',
    site: 'https://sqdsh.top/',
    vk: null,
    steam: 'sadlycipherka',
    youtube: null,
    twitch: null,
    git: 'https://git.sqdsh.top/me',
  };
}

function profile(id: string, shortCode: string, status: string, badge: string | null): ProfileData {
  return {
    id,
    status,
    badge,
    shortCode,
    site: null,
    vk: null,
    steam: null,
    youtube: null,
    twitch: null,
    git: null,
  };
}

/** Sample bot-comments.json: element 0 real (seconds timestamp), element 1 constructed. */
function sampleBotComments(): CommentData[] {
  return [
    { userID: '525366699969478676', text: 'aboba', vote: 1, isUpdated: false, createdAt: 1644388399 },
    {
      userID: '178404926869733376',
      text: 'Отличный бот, пользуюсь каждый день!',
      vote: 1,
      isUpdated: true,
      updatedAt: 1650183132145,
    },
  ];
}

function sampleServerComments(): CommentData[] {
  return [
    {
      userID: '178404926869733376',
      text: 'Лучший сервер про ботов!',
      vote: 1,
      isUpdated: false,
      createdAt: 1650181000000,
    },
    {
      userID: '585766846268047370',
      text: 'Помогли разобраться с API, спасибо.',
      vote: 1,
      isUpdated: false,
      createdAt: 1650181977858,
    },
    {
      userID: '525366699969478676',
      text: 'Долго отвечают в поддержке.',
      vote: -1,
      isUpdated: true,
      updatedAt: 1650190000000,
    },
  ];
}

function comment(userID: string, text: string, vote: number, updated: boolean, at: number): CommentData {
  return updated
    ? { userID, text, vote, isUpdated: true, updatedAt: at }
    : { userID, text, vote, isUpdated: false, createdAt: at };
}

function manyComments(): CommentData[] {
  const votes = [1, 0, -1];
  return Array.from({ length: MANY_COMMENTS_COUNT }, (_, k) => {
    const n = k + 1;
    return comment(
      `7000000000000000${String(n).padStart(2, '0')}`,
      `Комментарий №${n}`,
      votes[k % 3] ?? 0,
      n % 4 === 0,
      1650000000000 + n * 3_600_000,
    );
  });
}

function seedLinks(): LinkData[] {
  return [
    // sample links.json
    {
      id: 155,
      code: 'shiza',
      ownerID: '595939165917544460',
      domain: 'bcord.cc',
      views: 3,
      link: 'https://sqdsh.top/shizue',
      date: 1650181977858,
    },
    {
      id: 193,
      code: 'shiza',
      ownerID: '178404926869733376',
      domain: 'myservers.me',
      views: 0,
      link: 'https://sqdsh.top/',
      date: 1650183132145,
    },
    // constructed
    {
      id: 194,
      code: 'docs',
      ownerID: '178404926869733376',
      domain: 'bcord.cc',
      views: 12,
      link: 'https://docs.boticord.top/',
      date: 1650190000000,
    },
    {
      id: 195,
      code: 'camp',
      ownerID: '178404926869733376',
      domain: 'discord.camp',
      views: 1,
      link: 'https://boticord.top/',
      date: 1650200000000,
    },
  ];
}

function seedTokens(): Map<string, TokenInfo> {
  const bot = (botId: string, ownerId: string, serviceBot: boolean, privateServers: readonly string[]) =>
    ({ type: 'bot', ownerId, botId, serviceBot, privateServers }) satisfies TokenInfo;
  const user = (ownerId: string) =>
    ({ type: 'profile', ownerId, botId: null, serviceBot: false, privateServers: [] }) satisfies TokenInfo;
  return new Map<string, TokenInfo>([
    [TOKENS.serviceBot, bot(IDS.serviceBot, IDS.serviceBotOwner, true, [])],
    [TOKENS.plainBot, bot(IDS.plainBot, IDS.plainBotOwner, false, [])],
    [TOKENS.privateBot, bot(IDS.privateBot, IDS.privateBotOwner, false, PRIVATE_BOT_SERVERS)],
    [TOKENS.profile, user(IDS.profileUser)],
    [TOKENS.otherProfile, user(IDS.otherProfileUser)],
  ]);
}

/** A fresh copy of the seed data; `now` anchors the one seeded cooldown. */
export function createSeedState(now: number): EmulatorState {
  const fillers = Array.from({ length: FILLER_BOT_COUNT }, (_, k) => fillerBot(k + 1));
  const bots = [sampleBot(), serviceBot(), privateBot(), ...fillers];

  const servers = [
    sampleServer(),
    constructedServer(IDS.serverCooldown, 'tavern', 'Пиксельная Таверна', 17),
    constructedServer(IDS.serverBoosted, null, 'Аниме Уголок', 240, {
      members: [5210, 830],
      links: { invite: 'animeugol', site: null, youtube: null, twitch: null, steam: null, vk: null },
    }),
    constructedServer(IDS.serverNotUpdated, 'closed', 'Закрытый клуб', 5, { members: [40, 2] }),
  ];

  const botComments = new Map<string, CommentData[]>([
    [IDS.plainBot, sampleBotComments()],
    [IDS.serviceBot, manyComments()],
  ]);
  fillers.forEach((b, k) => {
    botComments.set(b.id, [
      comment(
        IDS.prolificUser,
        `Неплохой бот №${k + 1}`,
        k % 5 === 0 ? 0 : 1,
        false,
        1651000000000 + k * 60_000,
      ),
    ]);
  });

  const serverComments = new Map<string, CommentData[]>([
    [IDS.serverFresh, sampleServerComments()],
    [IDS.serverCooldown, [comment(IDS.plainBotOwner, 'Уютно и весело.', 1, false, 1652000000000)]],
  ]);

  return {
    bots: new Map(bots.map((b) => [b.id, b])),
    servers: new Map(servers.map((s) => [s.id, s])),
    profiles: new Map(
      [
        sampleProfile(),
        profile(IDS.otherProfileUser, 'sqdsh', 'Пишу ботов по вечерам', ''),
        profile(IDS.plainBotOwner, 'kerdokudev', 'Разработчик kerdoku', 'DEVELOPER'),
        profile(IDS.prolificUser, 'aboba', 'Оставляю отзывы', null),
      ].map((p) => [p.id, p]),
    ),
    comments: { bots: botComments, servers: serverComments },
    links: seedLinks(),
    nextLinkId: 196,
    tokens: seedTokens(),
    ups: new Map([[IDS.serverCooldown, now - SEED_COOLDOWN_AGE_MS]]),
    boostedServers: new Set([IDS.serverBoosted]),
    notUpdatedServers: new Map([[IDS.serverNotUpdated, NOT_UPDATED_SEED_MESSAGE]]),
    botsOnServers: new Map([
      [IDS.serverFresh, new Set<string>([IDS.serviceBot])],
      [IDS.serverCooldown, new Set<string>([IDS.plainBot, IDS.privateBot])],
      [IDS.serverBoosted, new Set<string>([IDS.serviceBot, IDS.privateBot])],
      [IDS.serverNotUpdated, new Set<string>()],
    ]),
    serverOwnerTags: new Map(),
    v3: seedV3(),
  };
}

/** Restores the seed data in place, so references to the state object stay valid. */
export function resetState(state: EmulatorState, now: number): void {
  Object.assign(state, createSeedState(now));
}

/** A server POST /server did not know yet: registered on the fly, like the real service. */
export function registerServer(state: EmulatorState, id: string): ServerData {
  const server: ServerData = {
    id,
    shortCode: null,
    status: 'NEW',
    links: serverLinks(id, null),
    bot: { id: null, approved: false },
    information: {
      name: '',
      avatar: '',
      members: [0, 0],
      owner: '',
      bumps: 0,
      tags: [],
      links: { invite: null, site: null, youtube: null, twitch: null, steam: null, vk: null },
      shortDescription: null,
      longDescription: null,
      badge: null,
    },
  };
  state.servers.set(id, server);
  return server;
}

/**
 * The command table: one entry per command, each calling one DirectoryClient method and
 * returning the validated result (for --json) and its readable form.
 */
import type { DirectoryClient } from '../directory/client.js';
import { ENDPOINTS, type EndpointName } from '../directory/endpoints.js';
import { parseReference, type RefKind } from '../directory/refs.js';
import type { ApiVersion, LinkDomainCode, OkResult } from '../directory/types.js';
import { API_VERSIONS } from '../directory/versions.js';
import { UsageError } from './errors.js';
import type { FlagSpec, ParsedValues } from './flags.js';
import { count, optional, optionalCount, required } from './flags.js';
import {
  formatBot,
  formatBotReferences,
  formatComments,
  formatLinks,
  formatOk,
  formatProfile,
  formatProfileComments,
  formatSearchHits,
  formatServer,
  formatTokenInfo,
  formatUp,
  formatValidateBot,
} from './format.js';

export interface CommandContext {
  client: DirectoryClient;
  values: ParsedValues;
  /** Positionals after the command words, already checked against `args`. */
  args: readonly string[];
  now: () => number;
}

export interface CommandResult {
  /** The validated result as the client returns it, printed by --json. */
  data: unknown;
  /** The readable form. */
  text: string;
}

export interface Command {
  /** Command words, e.g. 'bot' or 'links create'. */
  name: string;
  summary: string;
  /** Usage lines after the command words when the flags differ by version (one line each). */
  usage?: readonly string[];
  /** Positional arguments, as shown in the usage line. */
  args: readonly string[];
  flags: readonly FlagSpec[];
  /** Client methods the command may call, for the token line of its help. */
  endpoints: readonly EndpointName[];
  notes?: readonly string[];
  /** How messages name the command as typed, when the name alone is not it ('comments bot'). */
  label?(args: readonly string[]): string;
  execute(ctx: CommandContext): Promise<CommandResult>;
}

function describe(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

function reference(input: string, kind: RefKind, command: string): string {
  const ref = parseReference(input, kind);
  if (ref === null) {
    const accepted =
      kind === 'bot' ? 'ID, short code, mention or directory page URL' : 'ID, short code or page URL';
    throw new UsageError(`not a ${kind} ${accepted}: ${describe(input)}`, command);
  }
  return ref;
}

/** A user ID, also accepted as a mention (`<@id>`, `<@!id>`); the client checks the digits. */
function userId(input: string): string {
  const mention = /^<@!?(\d+)>$/.exec(input.trim());
  return mention?.[1] ?? input.trim();
}

function domain(
  values: ParsedValues,
  allowed: readonly LinkDomainCode[],
  command: string,
): LinkDomainCode | undefined {
  const value = optional(values, 'domain');
  if (value === undefined) return undefined;
  const n = count(value, 'domain', command);
  if (!(allowed as readonly number[]).includes(n)) {
    throw new UsageError(
      `--domain must be one of ${allowed.join(', ')} here, got ${describe(value)}`,
      command,
    );
  }
  return n as LinkDomainCode;
}

/** The API versions a command works on: those of its endpoints, newest first. */
export function versionsOf(command: Command): ApiVersion[] {
  return API_VERSIONS.filter((v) => command.endpoints.some((name) => ENDPOINTS[name].versions.includes(v)));
}

function arg(ctx: CommandContext, index: number): string {
  return ctx.args[index] ?? '';
}

const COMMENT_TARGETS = ['bot', 'server', 'profile'] as const;

const UP_FLAGS: readonly FlagSpec[] = [
  { name: 'server', type: 'string', value: 'ID', description: 'server ID (required)' },
  { name: 'user', type: 'string', value: 'ID', description: 'ID of the user who raises it (required)' },
  { name: 'channel', type: 'string', value: 'ID', description: 'ID of the channel of the raise (required)' },
  { name: 'channel-name', type: 'string', value: 'NAME', description: 'name of that channel (required)' },
  { name: 'no-up', type: 'boolean', description: 'update the statistics only (up = 0)' },
  { name: 'left', type: 'boolean', description: 'the bot is not on the server (status = 0)' },
  { name: 'name', type: 'string', value: 'TEXT', description: 'server name' },
  { name: 'avatar', type: 'string', value: 'URL', description: 'server avatar' },
  { name: 'members', type: 'string', value: 'N', description: 'number of members' },
  { name: 'online', type: 'string', value: 'N', description: 'number of members online' },
  { name: 'owner-id', type: 'string', value: 'ID', description: "owner's ID" },
  { name: 'owner-tag', type: 'string', value: 'TAG', description: "owner's tag" },
];

export const COMMANDS: readonly Command[] = [
  {
    name: 'bot',
    summary: 'show a bot',
    args: ['<ref>'],
    flags: [],
    endpoints: ['getBot'],
    notes: [
      '<ref> is an ID, a short code, a mention (<@id>) or a directory page URL (…/bot/x, …/b/x).',
      'API v3 looks bots up by ID; a short code is found through its search, which needs DIRECTORY_TOKEN.',
      'On v3 it shows the name, up count, rating, reviews and the ups still counting too.',
    ],
    async execute(ctx) {
      const bot = await ctx.client.getBot(reference(arg(ctx, 0), 'bot', 'bot'));
      return { data: bot, text: formatBot(bot, { version: ctx.client.version, now: ctx.now() }) };
    },
  },
  {
    name: 'server',
    summary: 'show a server',
    args: ['<ref>'],
    flags: [],
    endpoints: ['getServer'],
    notes: [
      '<ref> is an ID, a short code or a directory page URL (…/server/x, …/s/x).',
      'API v3 looks servers up by ID; a short code is found through its search, which needs DIRECTORY_TOKEN.',
      'On v3 it shows the up count, rating, reviews, ups still counting and moderators too.',
    ],
    async execute(ctx) {
      const server = await ctx.client.getServer(reference(arg(ctx, 0), 'server', 'server'));
      return { data: server, text: formatServer(server, { version: ctx.client.version, now: ctx.now() }) };
    },
  },
  {
    name: 'user',
    summary: "show a user: the profile, and on v3 the user's bots and servers",
    args: ['<userId>'],
    flags: [],
    endpoints: ['getProfile'],
    notes: ['On API v1/v2 it is the same as `directory profile`.'],
    async execute(ctx) {
      const profile = await ctx.client.getProfile(userId(arg(ctx, 0)));
      return { data: profile, text: formatProfile(profile, { version: ctx.client.version }) };
    },
  },
  {
    name: 'profile',
    summary: 'show a user profile (as `user`)',
    args: ['<userId>'],
    flags: [],
    endpoints: ['getProfile'],
    async execute(ctx) {
      const profile = await ctx.client.getProfile(userId(arg(ctx, 0)));
      return { data: profile, text: formatProfile(profile, { version: ctx.client.version }) };
    },
  },
  {
    name: 'comments',
    summary: 'comments on a bot or a server, or written by a user',
    args: ['bot|server|profile', '<id>'],
    flags: [],
    endpoints: ['getBotComments', 'getServerComments', 'getProfileComments'],
    notes: ['API v3 reads comments from its search service: it needs DIRECTORY_TOKEN.'],
    label: (args) => `comments ${args[0] ?? ''}`.trimEnd(),
    async execute(ctx) {
      const target = arg(ctx, 0);
      const id = userId(arg(ctx, 1));
      switch (target) {
        case 'bot': {
          const comments = await ctx.client.getBotComments(id);
          return { data: comments, text: formatComments(comments) };
        }
        case 'server': {
          const comments = await ctx.client.getServerComments(id);
          return { data: comments, text: formatComments(comments) };
        }
        case 'profile': {
          const comments = await ctx.client.getProfileComments(id);
          return { data: comments, text: formatProfileComments(comments) };
        }
        default:
          throw new UsageError(
            `comments are of a ${COMMENT_TARGETS.join(', a ')}; got ${describe(target)}`,
            'comments',
          );
      }
    },
  },
  {
    name: 'bots',
    summary: "list a developer's bots",
    args: ['<userId>'],
    flags: [],
    endpoints: ['getDeveloperBots'],
    async execute(ctx) {
      const bots = await ctx.client.getDeveloperBots(userId(arg(ctx, 0)));
      return { data: bots, text: formatBotReferences(bots) };
    },
  },
  {
    name: 'search',
    summary: "search the directory's bots or servers",
    args: ['bot|server', '<query>'],
    flags: [
      { name: 'limit', type: 'string', value: 'N', description: 'at most N hits, 1 to 100 (default 10)' },
    ],
    endpoints: ['search'],
    notes: [
      'Searches names and descriptions, best first. Needs DIRECTORY_TOKEN: the API key gets the',
      "search service's own key, which the CLI never prints.",
    ],
    label: (args) => `search ${args[0] ?? ''}`.trimEnd(),
    async execute(ctx) {
      const kind = arg(ctx, 0);
      if (kind !== 'bot' && kind !== 'server') {
        throw new UsageError(`search a bot or a server; got ${describe(kind)}`, 'search');
      }
      const limit = optionalCount(ctx.values, 'limit', 'search');
      if (limit !== undefined && (limit < 1 || limit > 100)) {
        throw new UsageError(`--limit must be from 1 to 100, got ${limit}`, 'search');
      }
      const query = arg(ctx, 1).trim();
      if (query.length === 0 || query.length > 200) {
        throw new UsageError('the query must have 1 to 200 characters', 'search');
      }
      const hits = await ctx.client.search(kind, query, limit === undefined ? {} : { limit });
      return { data: hits, text: formatSearchHits(hits) };
    },
  },
  {
    name: 'stats',
    summary: "post the bot's statistics",
    usage: [
      '--bot ID [--servers N] [--shards N] [--members N]   (API v3)',
      '--servers N --shards N --users N   (API v1, v2)',
    ],
    args: [],
    flags: [
      { name: 'servers', type: 'string', value: 'N', description: 'number of servers' },
      { name: 'shards', type: 'string', value: 'N', description: 'number of shards' },
      { name: 'members', type: 'string', value: 'N', description: 'v3: number of members' },
      { name: 'bot', type: 'string', value: 'ID', description: 'v3: ID of the bot (required on v3)' },
      { name: 'users', type: 'string', value: 'N', description: 'v1/v2: number of users' },
    ],
    endpoints: ['postBotStats'],
    notes: [
      'v3: --bot, and at least one of --servers, --shards, --members; a count of 0 or left out is not sent',
      '(v3 refuses a 0 and keeps the count it has).',
      'v1/v2: --servers, --shards and --users, all three.',
      'The directory asks for at most one post every 15 minutes.',
    ],
    async execute(ctx) {
      const v = ctx.values;
      const n = (name: string): number => count(required(v, name, 'stats'), name, 'stats');
      let result: OkResult;
      if (ctx.client.version === 'v3') {
        if (v.users !== undefined) {
          throw new UsageError('--users is the v1/v2 name: API v3 calls the count --members', 'stats');
        }
        const botId = userId(required(v, 'bot', 'stats'));
        const servers = optionalCount(v, 'servers', 'stats');
        const shards = optionalCount(v, 'shards', 'stats');
        const members = optionalCount(v, 'members', 'stats');
        if (![servers, shards, members].some((c) => c !== undefined && c > 0)) {
          throw new UsageError(
            'nothing to post: give --servers, --shards or --members above 0 (API v3 leaves a 0 out)',
            'stats',
          );
        }
        result = await ctx.client.postBotStats({ servers, shards, users: members, botId });
      } else {
        for (const name of ['bot', 'members']) {
          if (v[name] !== undefined) {
            throw new UsageError(
              `--${name} is for API v3; v1/v2 take --servers, --shards and --users`,
              'stats',
            );
          }
        }
        result = await ctx.client.postBotStats({
          servers: n('servers'),
          shards: n('shards'),
          users: n('users'),
        });
      }
      return {
        data: result,
        text: formatOk(result, 'statistics posted', 'the directory did not update the statistics'),
      };
    },
  },
  {
    name: 'up',
    summary: "update a server's statistics and raise it (POST /server)",
    args: [],
    flags: UP_FLAGS,
    endpoints: ['postServer'],
    notes: [
      'Prints the directory’s message, the bump count, the boost and when the next up is possible.',
      'A refused up (cooldown) is an answer, not an error: the exit code is 0.',
    ],
    async execute(ctx) {
      const v = ctx.values;
      const req = (name: string): string => required(v, name, 'up');
      const update = {
        serverId: req('server'),
        up: v['no-up'] !== true,
        botPresent: v.left !== true,
        upUserId: userId(req('user')),
        upChannelId: req('channel'),
        upChannelName: req('channel-name'),
        name: optional(v, 'name'),
        avatar: optional(v, 'avatar'),
        membersAll: optionalCount(v, 'members', 'up'),
        membersOnline: optionalCount(v, 'online', 'up'),
        ownerId: optional(v, 'owner-id'),
        ownerTag: optional(v, 'owner-tag'),
      };
      const result = await ctx.client.postServer(update);
      return { data: result, text: formatUp(result, ctx.now()) };
    },
  },
  {
    name: 'links list',
    summary: 'list your short links',
    args: [],
    flags: [{ name: 'code', type: 'string', value: 'C', description: 'only the links with this code' }],
    endpoints: ['getLinks'],
    async execute(ctx) {
      const code = optional(ctx.values, 'code');
      const links = await ctx.client.getLinks(code === undefined ? {} : { code });
      return { data: links, text: formatLinks(links) };
    },
  },
  {
    name: 'links create',
    summary: 'create a short link',
    args: [],
    flags: [
      { name: 'code', type: 'string', value: 'C', description: 'code of the short link (required)' },
      { name: 'link', type: 'string', value: 'URL', description: 'address to shorten (required)' },
      {
        name: 'domain',
        type: 'string',
        value: '1|3',
        description: 'domain: 1 bcord.cc (default), 3 discord.camp',
      },
    ],
    endpoints: ['createLink'],
    async execute(ctx) {
      const code = required(ctx.values, 'code', 'links create');
      const link = required(ctx.values, 'link', 'links create');
      const d = domain(ctx.values, [1, 3], 'links create');
      const result = await ctx.client.createLink(
        d === undefined ? { code, link } : { code, link, domain: d },
      );
      return {
        data: result,
        text: formatOk(result, `link ${code} created`, 'the directory did not create the link'),
      };
    },
  },
  {
    name: 'links delete',
    summary: 'delete a short link',
    args: [],
    flags: [
      { name: 'code', type: 'string', value: 'C', description: 'code of the link (required)' },
      {
        name: 'domain',
        type: 'string',
        value: '1|2|3',
        description: 'domain: 1 bcord.cc, 2 myservers.me, 3 discord.camp',
      },
    ],
    endpoints: ['deleteLink'],
    async execute(ctx) {
      const code = required(ctx.values, 'code', 'links delete');
      const d = domain(ctx.values, [1, 2, 3], 'links delete');
      const result = await ctx.client.deleteLink(d === undefined ? { code } : { code, domain: d });
      return {
        data: result,
        text: formatOk(result, `link ${code} deleted`, 'the directory did not delete the link'),
      };
    },
  },
  {
    name: 'validate-bot',
    summary: 'ask whether a bot is valid on a server',
    args: ['<serverId>', '<botId>'],
    flags: [],
    endpoints: ['validateBot'],
    async execute(ctx) {
      const result = await ctx.client.validateBot(arg(ctx, 0), userId(arg(ctx, 1)));
      return { data: result, text: formatValidateBot(result) };
    },
  },
  {
    name: 'token',
    summary: 'show what the directory says of the token',
    args: [],
    flags: [],
    endpoints: ['checkToken'],
    async execute(ctx) {
      const info = await ctx.client.checkToken();
      return { data: info, text: formatTokenInfo(info) };
    },
  },
];

/** Commands that have subcommands: the first word alone is not a command. */
export const GROUPS: ReadonlySet<string> = new Set(
  COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0] ?? ''),
);

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

export function subcommandsOf(group: string): Command[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group} `));
}

/**
 * The command table: one entry per command, each calling one DirectoryClient method and
 * returning the validated result (for --json) and its readable form.
 */
import type { DirectoryClient } from '../directory/client.js';
import { ENDPOINTS, type EndpointName } from '../directory/endpoints.js';
import { parseReference, type RefKind } from '../directory/refs.js';
import type { ApiVersion, LinkDomainCode, OkResult } from '../directory/types.js';
import { API_VERSIONS } from '../directory/versions.js';
import { cliError, UsageError } from './errors.js';
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

/**
 * A command's summary (`summary`) and notes (`notes`, lines) are under `cli.commands.<key>` in the
 * operator catalogs, its flags' descriptions under `cli.flags.<key>` (commandKey), so that its help
 * is said in the operator's language.
 */
export interface Command {
  /** Command words, e.g. 'bot' or 'links create'. */
  name: string;
  /** Usage lines after the command words when the flags differ by version (one line each). */
  usage?: readonly string[];
  /** Positional arguments, as shown in the usage line. */
  args: readonly string[];
  flags: readonly FlagSpec[];
  /** Client methods the command may call, for the token line of its help. */
  endpoints: readonly EndpointName[];
  /** It has `cli.commands.<key>.notes` for its help. */
  notes?: true;
  /** How messages name the command as typed, when the name alone is not it ('comments bot'). */
  label?(args: readonly string[]): string;
  execute(ctx: CommandContext): Promise<CommandResult>;
}

function describe(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/** The key of a command's texts in the operator catalogs: its words joined by `_` ('links_create'). */
export function commandKey(name: string): string {
  return name.replaceAll(' ', '_');
}

function reference(input: string, kind: RefKind, command: string): string {
  const ref = parseReference(input, kind);
  if (ref === null) {
    throw new UsageError(
      cliError(kind === 'bot' ? 'notBotRef' : 'notServerRef', { value: describe(input) }),
      command,
    );
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
    throw new UsageError(cliError('domain', { values: allowed.join(', '), value: describe(value) }), command);
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

const UP_FLAGS: readonly FlagSpec[] = [
  { name: 'server', type: 'string', value: 'ID', required: true },
  { name: 'user', type: 'string', value: 'ID', required: true },
  { name: 'channel', type: 'string', value: 'ID', required: true },
  { name: 'channel-name', type: 'string', value: 'NAME', required: true },
  { name: 'no-up', type: 'boolean' },
  { name: 'left', type: 'boolean' },
  { name: 'name', type: 'string', value: 'TEXT' },
  { name: 'avatar', type: 'string', value: 'URL' },
  { name: 'members', type: 'string', value: 'N' },
  { name: 'online', type: 'string', value: 'N' },
  { name: 'owner-id', type: 'string', value: 'ID' },
  { name: 'owner-tag', type: 'string', value: 'TAG' },
];

export const COMMANDS: readonly Command[] = [
  {
    name: 'bot',
    args: ['<ref>'],
    flags: [],
    endpoints: ['getBot'],
    notes: true,
    async execute(ctx) {
      const bot = await ctx.client.getBot(reference(arg(ctx, 0), 'bot', 'bot'));
      return { data: bot, text: formatBot(bot, { version: ctx.client.version, now: ctx.now() }) };
    },
  },
  {
    name: 'server',
    args: ['<ref>'],
    flags: [],
    endpoints: ['getServer'],
    notes: true,
    async execute(ctx) {
      const server = await ctx.client.getServer(reference(arg(ctx, 0), 'server', 'server'));
      return { data: server, text: formatServer(server, { version: ctx.client.version, now: ctx.now() }) };
    },
  },
  {
    name: 'user',
    args: ['<userId>'],
    flags: [],
    endpoints: ['getProfile'],
    notes: true,
    async execute(ctx) {
      const profile = await ctx.client.getProfile(userId(arg(ctx, 0)));
      return { data: profile, text: formatProfile(profile, { version: ctx.client.version }) };
    },
  },
  {
    name: 'profile',
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
    args: ['bot|server|profile', '<id>'],
    flags: [],
    endpoints: ['getBotComments', 'getServerComments', 'getProfileComments'],
    notes: true,
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
          throw new UsageError(cliError('commentsTarget', { value: describe(target) }), 'comments');
      }
    },
  },
  {
    name: 'bots',
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
    args: ['bot|server', '<query>'],
    flags: [{ name: 'limit', type: 'string', value: 'N' }],
    endpoints: ['search'],
    notes: true,
    label: (args) => `search ${args[0] ?? ''}`.trimEnd(),
    async execute(ctx) {
      const kind = arg(ctx, 0);
      if (kind !== 'bot' && kind !== 'server') {
        throw new UsageError(cliError('searchKind', { value: describe(kind) }), 'search');
      }
      const limit = optionalCount(ctx.values, 'limit', 'search');
      if (limit !== undefined && (limit < 1 || limit > 100)) {
        throw new UsageError(cliError('searchLimit', { value: limit }), 'search');
      }
      const query = arg(ctx, 1).trim();
      if (query.length === 0 || query.length > 200) {
        throw new UsageError(cliError('searchQuery'), 'search');
      }
      const hits = await ctx.client.search(kind, query, limit === undefined ? {} : { limit });
      return { data: hits, text: formatSearchHits(hits) };
    },
  },
  {
    name: 'stats',
    usage: [
      '--bot ID [--servers N] [--shards N] [--members N]   (API v3)',
      '--servers N --shards N --users N   (API v1, v2)',
    ],
    args: [],
    flags: [
      { name: 'servers', type: 'string', value: 'N' },
      { name: 'shards', type: 'string', value: 'N' },
      { name: 'members', type: 'string', value: 'N' },
      { name: 'bot', type: 'string', value: 'ID' },
      { name: 'users', type: 'string', value: 'N' },
    ],
    endpoints: ['postBotStats'],
    notes: true,
    async execute(ctx) {
      const v = ctx.values;
      const n = (name: string): number => count(required(v, name, 'stats'), name, 'stats');
      let result: OkResult;
      if (ctx.client.version === 'v3') {
        if (v.users !== undefined) {
          throw new UsageError(cliError('statsUsers'), 'stats');
        }
        const botId = userId(required(v, 'bot', 'stats'));
        const servers = optionalCount(v, 'servers', 'stats');
        const shards = optionalCount(v, 'shards', 'stats');
        const members = optionalCount(v, 'members', 'stats');
        if (![servers, shards, members].some((c) => c !== undefined && c > 0)) {
          throw new UsageError(cliError('statsNothing'), 'stats');
        }
        result = await ctx.client.postBotStats({ servers, shards, users: members, botId });
      } else {
        for (const name of ['bot', 'members']) {
          if (v[name] !== undefined) {
            throw new UsageError(cliError('statsV3Flag', { name }), 'stats');
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
    args: [],
    flags: UP_FLAGS,
    endpoints: ['postServer'],
    notes: true,
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
    args: [],
    flags: [{ name: 'code', type: 'string', value: 'C' }],
    endpoints: ['getLinks'],
    async execute(ctx) {
      const code = optional(ctx.values, 'code');
      const links = await ctx.client.getLinks(code === undefined ? {} : { code });
      return { data: links, text: formatLinks(links) };
    },
  },
  {
    name: 'links create',
    args: [],
    flags: [
      { name: 'code', type: 'string', value: 'C', required: true },
      { name: 'link', type: 'string', value: 'URL', required: true },
      {
        name: 'domain',
        type: 'string',
        value: '1|3',
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
    args: [],
    flags: [
      { name: 'code', type: 'string', value: 'C', required: true },
      {
        name: 'domain',
        type: 'string',
        value: '1|2|3',
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

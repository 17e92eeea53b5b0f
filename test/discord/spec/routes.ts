// The Discord API v10 routes the stand-in serves (rest.ts): every one the bot and discord.js call.
// trim.ts keeps these operations of Discord's OpenAPI description, and the stand-in checks every
// request against them (conformance.ts): a request to a route left out here is a violation too.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SpecRoute {
  readonly method: HttpMethod;
  /** The path template as Discord's OpenAPI description writes it. */
  readonly path: string;
}

const COMMANDS = '/applications/{application_id}/commands';
const GUILD_COMMANDS = '/applications/{application_id}/guilds/{guild_id}/commands';
const WEBHOOK = '/webhooks/{webhook_id}/{webhook_token}';

export const SPEC_ROUTES: readonly SpecRoute[] = [
  { method: 'GET', path: '/gateway' },
  { method: 'GET', path: '/gateway/bot' },
  { method: 'GET', path: '/users/@me' },
  { method: 'GET', path: '/users/{user_id}' },
  { method: 'POST', path: '/users/@me/channels' },
  { method: 'GET', path: '/applications/@me' },
  { method: 'GET', path: COMMANDS },
  { method: 'PUT', path: COMMANDS },
  { method: 'POST', path: COMMANDS },
  { method: 'GET', path: `${COMMANDS}/{command_id}` },
  { method: 'PATCH', path: `${COMMANDS}/{command_id}` },
  { method: 'DELETE', path: `${COMMANDS}/{command_id}` },
  { method: 'GET', path: GUILD_COMMANDS },
  { method: 'PUT', path: GUILD_COMMANDS },
  { method: 'POST', path: GUILD_COMMANDS },
  { method: 'GET', path: `${GUILD_COMMANDS}/{command_id}` },
  { method: 'PATCH', path: `${GUILD_COMMANDS}/{command_id}` },
  { method: 'DELETE', path: `${GUILD_COMMANDS}/{command_id}` },
  { method: 'GET', path: '/guilds/{guild_id}' },
  { method: 'GET', path: '/guilds/{guild_id}/channels' },
  { method: 'GET', path: '/guilds/{guild_id}/roles' },
  { method: 'GET', path: '/guilds/{guild_id}/members/{user_id}' },
  { method: 'PUT', path: '/guilds/{guild_id}/members/{user_id}/roles/{role_id}' },
  { method: 'DELETE', path: '/guilds/{guild_id}/members/{user_id}/roles/{role_id}' },
  { method: 'GET', path: '/channels/{channel_id}' },
  { method: 'POST', path: '/channels/{channel_id}/messages' },
  { method: 'PATCH', path: '/channels/{channel_id}/messages/{message_id}' },
  { method: 'DELETE', path: '/channels/{channel_id}/messages/{message_id}' },
  { method: 'POST', path: '/interactions/{interaction_id}/{interaction_token}/callback' },
  { method: 'GET', path: WEBHOOK },
  { method: 'POST', path: WEBHOOK },
  { method: 'GET', path: `${WEBHOOK}/messages/@original` },
  { method: 'PATCH', path: `${WEBHOOK}/messages/@original` },
  { method: 'DELETE', path: `${WEBHOOK}/messages/@original` },
  { method: 'GET', path: `${WEBHOOK}/messages/{message_id}` },
  { method: 'PATCH', path: `${WEBHOOK}/messages/{message_id}` },
  { method: 'DELETE', path: `${WEBHOOK}/messages/{message_id}` },
];

import { describe, expect, it } from 'vitest';
import { authorizationFor, ENDPOINTS } from '../../src/directory/endpoints.js';
import { InvalidArgumentError, TokenKindNotAcceptedError } from '../../src/directory/errors.js';
import { assertRef, assertSnowflake, buildPath, parseReference } from '../../src/directory/refs.js';

describe('references', () => {
  it('reads IDs, short codes, mentions and page URLs', () => {
    expect(parseReference('724663360934772797', 'bot')).toBe('724663360934772797');
    expect(parseReference(' kerdoku ', 'bot')).toBe('kerdoku');
    expect(parseReference('<@!724663360934772797>', 'bot')).toBe('724663360934772797');
    expect(parseReference('https://boticord.top/bot/kerdoku', 'bot')).toBe('kerdoku');
    expect(parseReference('https://bcord.cc/b/724663360934772797', 'bot')).toBe('724663360934772797');
    expect(parseReference('https://myservers.me/s/boticord', 'server')).toBe('boticord');
    expect(parseReference('https://boticord.top/server/boticord/', 'server')).toBe('boticord');
  });

  it('refuses what could reach another route', () => {
    for (const bad of [
      '../links/get',
      'kerdoku?x=1',
      'kerdoku#frag',
      'a%2Fb',
      'with space',
      '',
      'x'.repeat(33),
      'https://boticord.top/bot/../links',
      'javascript:alert(1)',
      'https://boticord.top/server/boticord',
    ]) {
      expect(parseReference(bad, 'bot'), bad).toBeNull();
      expect(() => assertRef(bad, 'bot reference'), bad).toThrow(InvalidArgumentError);
    }
    expect(() => assertSnowflake('kerdoku', 'user ID')).toThrow(/Discord ID/);
    expect(() => assertSnowflake('12345', 'user ID')).toThrow(InvalidArgumentError);
  });

  it('encodes every path segment', () => {
    expect(buildPath('/bot/{ref}', { ref: 'a/b?c' })).toBe('/bot/a%2Fb%3Fc');
    expect(buildPath('/server/{serverId}/validateBot/{botId}', { serverId: '1#', botId: '../2' })).toBe(
      '/server/1%23/validateBot/..%2F2',
    );
    expect(buildPath('/bot/{id}/comments', { id: 'é' })).toBe('/bot/%C3%A9/comments');
    expect(buildPath('/stats', {})).toBe('/stats');
    // The same template again, now from its cached form, with other values.
    expect(buildPath('/bot/{id}/comments', { id: '7' })).toBe('/bot/7/comments');
    expect(() => buildPath('/server/{serverId}/validateBot/{botId}', { serverId: '1' })).toThrow(
      /missing path parameter botId/,
    );
  });
});

describe('authorization', () => {
  it('sends the bare token in v1 and the kind word in v2', () => {
    expect(authorizationFor(ENDPOINTS.postBotStats, 'v1', 'tok', 'Profile')).toBe('tok');
    expect(authorizationFor(ENDPOINTS.postBotStats, 'v2', 'tok', 'Bot')).toBe('Bot tok');
    expect(authorizationFor(ENDPOINTS.getBot, 'v2', 'tok', 'Bot')).toBeUndefined();
  });

  const table: Array<[keyof typeof ENDPOINTS, string[]]> = [
    ['postServer', ['Bot', 'PrivateBot']],
    ['postBotStats', ['Bot']],
    ['getBotComments', ['Bot', 'PrivateBot', 'Profile']],
    ['getServerComments', ['Bot', 'PrivateBot', 'Profile']],
    ['getProfileComments', ['Bot', 'PrivateBot', 'Profile']],
    ['getDeveloperBots', ['Bot', 'PrivateBot', 'Profile']],
    ['getLinks', ['Profile']],
    ['createLink', ['Profile']],
    ['deleteLink', ['Profile']],
  ];
  for (const [name, accepted] of table) {
    for (const kind of ['Bot', 'PrivateBot', 'Profile'] as const) {
      it(`v2 ${name} ${accepted.includes(kind) ? 'accepts' : 'refuses'} ${kind}`, () => {
        const call = () => authorizationFor(ENDPOINTS[name], 'v2', 'tok', kind);
        if (accepted.includes(kind)) expect(call()).toBe(`${kind} tok`);
        else {
          expect(call).toThrow(TokenKindNotAcceptedError);
          expect(call).toThrow(new RegExp(`${name}.*accepts: ${accepted.join(', ')}`));
        }
      });
    }
  }

  it('needs a token for protected methods and v2 for v2-only ones', () => {
    expect(() => authorizationFor(ENDPOINTS.postServer, 'v2', undefined, 'Bot')).toThrow(/DIRECTORY_TOKEN/);
    expect(() => authorizationFor(ENDPOINTS.validateBot, 'v1', 'tok', 'Bot')).toThrow(/only in API v2/);
  });
});

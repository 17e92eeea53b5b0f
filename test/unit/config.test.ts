import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.directory).toMatchObject({
      baseUrl: 'https://api.boticord.top',
      version: 'v2',
      token: undefined,
      tokenKind: 'Bot',
      timeoutMs: 10_000,
      maxRetries: 2,
      rateLimits: { global: { max: 5, windowMs: 5000 }, routes: { max: 1, windowMs: 2000 }, marginMs: 25 },
    });
    expect(config.logLevel).toBe('info');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DIRECTORY_API_URL: 'http://127.0.0.1:8787/',
      DIRECTORY_API_VERSION: 'v1',
      DIRECTORY_TOKEN: ' secret ',
      DIRECTORY_TOKEN_KIND: 'Profile',
      DIRECTORY_TIMEOUT_MS: '2500',
      DIRECTORY_MAX_RETRIES: '0',
      DIRECTORY_RATE_LIMIT: '10/1000',
      DIRECTORY_ROUTE_RATE_LIMIT: '2/500',
      DIRECTORY_RATE_LIMIT_MARGIN_MS: '0',
      LOG_LEVEL: 'debug',
    });
    expect(config.directory).toMatchObject({
      baseUrl: 'http://127.0.0.1:8787',
      version: 'v1',
      token: 'secret',
      tokenKind: 'Profile',
      timeoutMs: 2500,
      maxRetries: 0,
      rateLimits: { global: { max: 10, windowMs: 1000 }, routes: { max: 2, windowMs: 500 }, marginMs: 0 },
    });
    expect(config.logLevel).toBe('debug');
  });

  it('reports every bad variable at once, in one message', () => {
    let error: unknown;
    try {
      loadConfig({
        DIRECTORY_API_URL: 'ftp://nope',
        DIRECTORY_API_VERSION: 'v3',
        DIRECTORY_TOKEN_KIND: 'User',
        DIRECTORY_TIMEOUT_MS: 'soon',
        DIRECTORY_RATE_LIMIT: 'lots',
        LOG_LEVEL: 'loud',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, problems } = error as ConfigError;
    expect(problems).toHaveLength(6);
    expect(message).toMatch(/^Invalid configuration:/);
    expect(message).toContain('DIRECTORY_API_URL: expected an http(s) URL (got "ftp://nope")');
    expect(message).toContain('DIRECTORY_API_VERSION: expected one of v1, v2 (got "v3")');
    expect(message).toContain('DIRECTORY_TOKEN_KIND: expected one of Bot, PrivateBot, Profile');
    expect(message).toContain('DIRECTORY_TIMEOUT_MS: expected a whole number from 100 to 120000');
    expect(message).toContain('DIRECTORY_RATE_LIMIT: expected REQUESTS/MILLISECONDS');
    expect(message).toContain('LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent');
  });
});

describe('shard processes', () => {
  it('knows it is a shard process and which shards it runs from what the ShardingManager sets', () => {
    const config = loadConfig({ SHARDING_MANAGER: 'true', SHARDS: '[2,3]', SHARD_COUNT: '4' });
    expect(config.sharding).toEqual({ shardCount: 4, isChild: true, childShards: [2, 3] });
    expect(loadConfig({}).sharding).toEqual({ shardCount: 'auto', isChild: false, childShards: [] });
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { DEFAULT_LOCK_WAIT_MS } from '../../src/store/open.js';
import { problemsOf } from '../support/config.js';

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    // v3 is the default: the directory's documentation marks it Active, v1 and v2 Inactive.
    expect(config.directory).toMatchObject({
      baseUrl: 'https://api.boticord.top',
      version: 'v3',
      token: undefined,
      timeoutMs: 10_000,
      maxRetries: 2,
      rateLimits: { global: { max: 25, windowMs: 10_000 }, marginMs: 25 },
      searchUrl: undefined,
      cache: { ttlMs: 300_000, maxEntries: 5_000 },
    });
    // Each version's published limits unless set: v2's 5 per 5 s and 1 per 2 s on its two routes.
    expect(loadConfig({ DIRECTORY_API_VERSION: 'v2' }).directory).toMatchObject({
      version: 'v2',
      tokenKind: 'Bot',
      rateLimits: { global: { max: 5, windowMs: 5000 }, routes: { max: 1, windowMs: 2000 }, marginMs: 25 },
    });
    expect(config.logLevel).toBe('info');
    // The store's own default, written twice because the configuration loads no store code.
    expect(config.sqliteLockWaitMs).toBe(DEFAULT_LOCK_WAIT_MS);
    expect(loadConfig({ SQLITE_LOCK_WAIT: '2m' }).sqliteLockWaitMs).toBe(120_000);
    // PostgreSQL's pool: the store's own default of 10, an operator's smaller one, nothing silly.
    expect(config.databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(problemsOf({ DATABASE_POOL_SIZE: '0' })).toEqual([expect.stringMatching(/^DATABASE_POOL_SIZE: /)]);
    expect(problemsOf({ DATABASE_POOL_SIZE: '101' })).toEqual([
      expect.stringMatching(/^DATABASE_POOL_SIZE: /),
    ]);
  });

  it('refuses a v1/v2 setting given with v3, and a v3 one with v2, each in one line that says why', () => {
    expect(problemsOf({ DIRECTORY_TOKEN_KIND: 'PrivateBot' })).toEqual([
      expect.stringMatching(
        /^DIRECTORY_TOKEN_KIND: is a v1\/v2 setting: API v3 takes the key bare, with no kind; remove it, or set DIRECTORY_API_VERSION=v2/,
      ),
    ]);
    expect(problemsOf({ DIRECTORY_API_VERSION: 'v3', DIRECTORY_ROUTE_RATE_LIMIT: '1/2000' })).toEqual([
      expect.stringMatching(/^DIRECTORY_ROUTE_RATE_LIMIT: is a v1\/v2 setting: API v3 publishes one limit/),
    ]);
    expect(
      problemsOf({ DIRECTORY_API_VERSION: 'v2', DIRECTORY_SEARCH_URL: 'http://127.0.0.1:1/v3/search' }),
    ).toEqual([expect.stringMatching(/^DIRECTORY_SEARCH_URL: is a v3 setting: API v2 has no search/)]);
    // Each setting in its own version is taken.
    expect(problemsOf({ DIRECTORY_API_VERSION: 'v2', DIRECTORY_TOKEN_KIND: 'PrivateBot' })).toEqual([]);
    expect(loadConfig({ DIRECTORY_SEARCH_URL: 'http://127.0.0.1:1/v3/search/' }).directory.searchUrl).toBe(
      'http://127.0.0.1:1/v3/search',
    );
    expect(loadConfig({ DIRECTORY_CACHE_SIZE: '0' }).directory.cache.maxEntries).toBe(0);
  });

  it("opens the directory's notifications on v3 only, and takes a v2 up key on v3 only", () => {
    expect(loadConfig({}).directory.notifyUrl).toBe('wss://gateway.boticord.top/websocket/');
    expect(loadConfig({ DIRECTORY_NOTIFY_URL: 'off' }).directory.notifyUrl).toBeUndefined();
    expect(loadConfig({ DIRECTORY_NOTIFY_URL: 'ws://127.0.0.1:1/websocket/' }).directory.notifyUrl).toBe(
      'ws://127.0.0.1:1/websocket/',
    );
    expect(loadConfig({ DIRECTORY_API_VERSION: 'v2' }).directory.notifyUrl).toBeUndefined();
    expect(problemsOf({ DIRECTORY_NOTIFY_URL: 'https://gateway.boticord.top/websocket/' })).toEqual([
      expect.stringMatching(/^DIRECTORY_NOTIFY_URL: expected a ws\(s\) URL, or off/),
    ]);
    expect(problemsOf({ DIRECTORY_API_VERSION: 'v2', DIRECTORY_NOTIFY_URL: 'off' })).toEqual([
      expect.stringMatching(/^DIRECTORY_NOTIFY_URL: is a v3 setting: API v2 has no notifications/),
    ]);
    expect(problemsOf({ DIRECTORY_API_VERSION: 'v2', DIRECTORY_UP_TOKEN: 'a-v2-private-token' })).toEqual([
      expect.stringMatching(
        /^DIRECTORY_UP_TOKEN: is a v3 setting: API v2 raises servers with DIRECTORY_TOKEN/,
      ),
    ]);
    expect(problemsOf({ DIRECTORY_UP_TOKEN_KIND: 'Bot' })).toEqual([
      expect.stringMatching(/^DIRECTORY_UP_TOKEN_KIND: is set without DIRECTORY_UP_TOKEN/),
    ]);
    const up = loadConfig({ DIRECTORY_UP_TOKEN: 'a-v2-private-token' }).directory;
    expect([up.upToken, up.upTokenKind]).toEqual(['a-v2-private-token', 'PrivateBot']);
    // The up key is a secret: never echoed in a message about it.
    const problems = problemsOf({ DIRECTORY_UP_TOKEN: 'v2-up-secret xyz' });
    expect(problems).toEqual([expect.stringMatching(/^DIRECTORY_UP_TOKEN: expected the token alone/)]);
    expect(problems.join('')).not.toContain('v2-up-secret');
  });

  it('reads the bot ID from the application ID, else from the token', () => {
    const token = `${Buffer.from('123456789012345678').toString('base64')}.abc.def`;
    expect(loadConfig({ DISCORD_TOKEN: token }).discord.botId).toBe('123456789012345678');
    expect(
      loadConfig({ DISCORD_TOKEN: token, DISCORD_APPLICATION_ID: '876543210987654321' }).discord.botId,
    ).toBe('876543210987654321');
    expect(loadConfig({ DISCORD_TOKEN: 'not-a-bot-token' }).discord.botId).toBeUndefined();
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
        DIRECTORY_API_VERSION: 'v4',
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
    expect(message).toContain('DIRECTORY_API_VERSION: expected one of v3, v2, v1 (got "v4")');
    expect(message).toContain('DIRECTORY_TOKEN_KIND: expected one of Bot, PrivateBot, Profile');
    expect(message).toContain('DIRECTORY_TIMEOUT_MS: expected a whole number from 100 to 120000');
    expect(message).toContain('DIRECTORY_RATE_LIMIT: expected REQUESTS/MILLISECONDS');
    expect(message).toContain('LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent');
  });
});

describe('the REST proxy (DISCORD_REST_PROXY_*)', () => {
  it('the hosts: the proxy for the bot-token requests, /api added when missing; the direct address apart', () => {
    expect(loadConfig({}).discord).toMatchObject({ apiUrl: undefined, restProxyUrl: undefined });
    for (const url of [
      'http://discord-proxy:8080',
      'http://discord-proxy:8080/',
      'http://discord-proxy:8080/api',
    ]) {
      const config = loadConfig({ DISCORD_REST_PROXY_URL: url, DISCORD_API_URL: 'http://127.0.0.1:9/api' });
      expect(config.discord, url).toMatchObject({
        restProxyUrl: 'http://discord-proxy:8080/api',
        apiUrl: 'http://127.0.0.1:9/api',
      });
    }
    expect(problemsOf({ DISCORD_REST_PROXY_URL: 'discord-proxy:8080' })).toEqual([
      'DISCORD_REST_PROXY_URL: expected an http(s) URL (got "discord-proxy:8080")',
    ]);
  });

  it('the proxy itself: its port (none by default) and address (127.0.0.1 by default)', () => {
    expect(loadConfig({}).restProxy).toEqual({ port: undefined, host: '127.0.0.1' });
    expect(
      loadConfig({ DISCORD_REST_PROXY_PORT: '8080', DISCORD_REST_PROXY_HOST: '0.0.0.0' }).restProxy,
    ).toEqual({
      port: 8080,
      host: '0.0.0.0',
    });
    expect(problemsOf({ DISCORD_REST_PROXY_PORT: 'http', DISCORD_REST_PROXY_HOST: 'http://x' })).toHaveLength(
      2,
    );
  });
});

describe('shard processes', () => {
  it('knows it is a shard process and which shards it runs from what the ShardingManager sets', () => {
    const config = loadConfig({ SHARDING_MANAGER: 'true', SHARDS: '[2,3]', SHARD_COUNT: '4' });
    expect(config.sharding).toMatchObject({
      shardCount: 4,
      isChild: true,
      childShards: [2, 3],
      hostShards: undefined,
    });
    expect(loadConfig({}).sharding).toMatchObject({
      shardCount: 'auto',
      isChild: false,
      childShards: [],
      hostShards: undefined,
    });
  });
});

describe('one host of several (SHARD_IDS, HOST_INDEX × SHARDS_PER_HOST)', () => {
  const DB = 'postgres://bot@127.0.0.1:5432/bot';

  it('reads a range, a list, or both, and the host name', () => {
    const base = { SHARD_COUNT: '12', DATABASE_URL: DB };
    expect(loadConfig({ ...base, SHARD_IDS: '0-3' }).sharding.hostShards).toEqual([0, 1, 2, 3]);
    expect(loadConfig({ ...base, SHARD_IDS: '4,5, 6' }).sharding.hostShards).toEqual([4, 5, 6]);
    expect(loadConfig({ ...base, SHARD_IDS: '9-10,2' }).sharding.hostShards).toEqual([2, 9, 10]);
    expect(loadConfig({ ...base, SHARD_IDS: '7', HOST_ID: 'bot-2' }).sharding).toMatchObject({
      hostShards: [7],
      hostId: 'bot-2',
    });
  });

  it('takes a gone host for gone after HOST_GONE_AFTER (a minute unless set), within bounds', () => {
    const base = { SHARD_COUNT: '4', SHARD_IDS: '0-1', DATABASE_URL: DB };
    expect(loadConfig(base).sharding.hostGoneAfterMs).toBe(60_000);
    expect(loadConfig({ ...base, HOST_GONE_AFTER: '15s' }).sharding.hostGoneAfterMs).toBe(15_000);
    expect(problemsOf({ ...base, HOST_GONE_AFTER: '5s' })).toEqual([
      'HOST_GONE_AFTER: at least 10s: a live host writes its shards every 5 s (got "5s")',
    ]);
    expect(problemsOf({ ...base, HOST_GONE_AFTER: '20m' })).toEqual([
      'HOST_GONE_AFTER: at most 10m: a gone host\'s ups must be answered while their interaction tokens (15 min) live (got "20m")',
    ]);
  });

  it("takes a StatefulSet pod's ordinal: HOST_INDEX 2 with 2 shards per host runs shards 4 and 5", () => {
    const config = loadConfig({ SHARD_COUNT: '6', HOST_INDEX: '2', SHARDS_PER_HOST: '2', DATABASE_URL: DB });
    expect(config.sharding.hostShards).toEqual([4, 5]);
  });

  it('refuses what cannot work, each in one line naming the variable', () => {
    expect(problemsOf({ SHARD_IDS: '0-1', DATABASE_URL: DB })).toEqual([
      'SHARD_COUNT: a fixed number of shards is needed with SHARD_IDS: every host must count the same',
    ]);
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: '2-5', DATABASE_URL: DB })).toEqual([
      'SHARD_IDS: shard 4 does not exist: ids go from 0 to SHARD_COUNT - 1 (3) (got "2-5")',
    ]);
    expect(problemsOf({ SHARD_COUNT: '6', HOST_INDEX: '3', SHARDS_PER_HOST: '2', DATABASE_URL: DB })).toEqual(
      ['HOST_INDEX: shard 6 does not exist: ids go from 0 to SHARD_COUNT - 1 (5) (got "3")'],
    );
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: '0-1' })).toEqual([
      'DATABASE_URL: hosts running shard ranges (SHARD_IDS) share PostgreSQL; set DATABASE_URL',
    ]);
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: '3-1', DATABASE_URL: DB })).toEqual([
      'SHARD_IDS: the range 3-1 runs backwards (got "3-1")',
    ]);
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: '0-2,1', DATABASE_URL: DB })).toEqual([
      'SHARD_IDS: a shard id is named twice (got "0-2,1")',
    ]);
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: 'all', DATABASE_URL: DB })).toEqual([
      'SHARD_IDS: expected shard ids such as 0-3 or 0,1,2,3 (got "all")',
    ]);
    expect(problemsOf({ SHARD_COUNT: '4', HOST_INDEX: '1', DATABASE_URL: DB })).toEqual([
      'SHARDS_PER_HOST: HOST_INDEX and SHARDS_PER_HOST go together (this host runs shards index × per host onwards)',
    ]);
    expect(
      problemsOf({
        SHARD_COUNT: '4',
        SHARD_IDS: '0',
        HOST_INDEX: '0',
        SHARDS_PER_HOST: '1',
        DATABASE_URL: DB,
      }),
    ).toEqual(['SHARD_IDS: set either SHARD_IDS or HOST_INDEX with SHARDS_PER_HOST, not both (got "0")']);
    expect(problemsOf({ SHARD_COUNT: '4', SHARD_IDS: '0', HOST_ID: 'a b', DATABASE_URL: DB })).toEqual([
      'HOST_ID: expected 1 to 100 letters, digits, ".", "_", "-" or ":" (got "a b")',
    ]);
  });
});

describe("in the operator's language (LC_ALL, LC_MESSAGES, LANG)", () => {
  const bad = {
    DIRECTORY_API_URL: 'ftp://nope',
    DISCORD_TOKEN: 'two words-secret-7f3a',
    STATS_INTERVAL: '1s',
  };

  function errorOf(env: Record<string, string>): ConfigError {
    try {
      loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) return err;
    }
    throw new Error('the configuration loaded');
  }

  it('says the same bad configuration in Russian under ru_RU.UTF-8 and in English under C', () => {
    const ru = errorOf({ ...bad, LANG: 'ru_RU.UTF-8' });
    expect(ru.message).toMatch(/^Настройки заданы неверно:\n/);
    expect(ru.problems).toEqual([
      'DIRECTORY_API_URL: нужен адрес http(s) (задано "ftp://nope")',
      'DISCORD_TOKEN: нужен только токен, одним словом: внутри пробел (значение скрыто)',
      expect.stringMatching(/^STATS_INTERVAL: 1 с — слишком часто: .*укажите 15m или больше/),
    ]);
    const en = errorOf({ ...bad, LANG: 'C' });
    expect(en.message).toMatch(/^Invalid configuration:\n/);
    expect(en.problems).toEqual([
      'DIRECTORY_API_URL: expected an http(s) URL (got "ftp://nope")',
      'DISCORD_TOKEN: expected the token alone, as one word: it has a space inside (value hidden)',
      expect.stringMatching(/^STATS_INTERVAL: 1 s is too often: .*use 15m or more/),
    ]);
    // The same problems either way, and the token in neither.
    expect(ru.problemsIn('en')).toEqual(en.problems);
    for (const error of [ru, en]) expect(error.message).not.toContain('secret');
  });

  it('takes LC_ALL over LANG, and English when nothing is set', () => {
    expect(errorOf({ ...bad, LC_ALL: 'C', LANG: 'ru_RU.UTF-8' }).message).toMatch(/^Invalid configuration:/);
    expect(errorOf({ ...bad, LC_ALL: 'ru_RU.UTF-8', LANG: 'C' }).message).toMatch(
      /^Настройки заданы неверно:/,
    );
    expect(errorOf(bad).message).toMatch(/^Invalid configuration:/);
  });

  it('says the checks of variables taken together in Russian too', () => {
    const ru = errorOf({
      LANG: 'ru',
      DIRECTORY_API_VERSION: 'v2',
      DIRECTORY_SEARCH_URL: 'https://s.example',
      SHARD_IDS: '0-1',
    });
    expect(ru.problems).toContain(
      'DIRECTORY_SEARCH_URL: это настройка v3: в API v2 нет поиска; уберите её или задайте DIRECTORY_API_VERSION=v3 (задано "https://s.example")',
    );
    expect(ru.problems).toContain(
      'SHARD_COUNT: с SHARD_IDS нужно точное число шардов: у всех хостов оно должно совпадать',
    );
    expect(ru.problems).toContain(
      'DATABASE_URL: хосты с диапазонами шардов (SHARD_IDS) работают с общей PostgreSQL; задайте DATABASE_URL',
    );
  });

  it('never shows a PostgreSQL password, in either language', () => {
    for (const LANG of ['ru_RU.UTF-8', 'C']) {
      const error = errorOf({ LANG, DATABASE_URL: 'mysql://bot:hunter2secret@db/bot' });
      expect(error.message).toContain('mysql:');
      expect(error.message).not.toContain('hunter2secret');
    }
  });
});

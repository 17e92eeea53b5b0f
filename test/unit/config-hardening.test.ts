/**
 * An operator's slips in the configuration: each is reported with every other bad variable, in
 * one message, and none reaches a user or a terminal as something else (a network error, a
 * disabled endpoint, a 404).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  type Environment,
  loadConfig,
  readEnvironment,
  SCHEMA,
  secretsOf,
} from '../../src/config/env.js';
import { problemsOf } from '../support/config.js';

const MIN = 60_000;

function messageOf(env: Environment): string {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return '';
}

describe('STATS_INTERVAL', () => {
  it('is reported in the one message with every other bad variable', () => {
    const problems = problemsOf({ STATS_INTERVAL: '1m', LOG_LEVEL: 'loud', DIRECTORY_API_VERSION: 'v9' });
    expect(problems).toHaveLength(3);
    expect(problems.find((p) => p.startsWith('LOG_LEVEL:'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('DIRECTORY_API_VERSION:'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('STATS_INTERVAL:'))).toContain('at least 15 min');
  });

  it('accepts 15 minutes and more', () => {
    expect(loadConfig({ STATS_INTERVAL: '15m' }).stats.intervalMs).toBe(15 * MIN);
    expect(loadConfig({ STATS_INTERVAL: '1h' }).stats.intervalMs).toBe(60 * MIN);
    expect(loadConfig({}).stats.intervalMs).toBe(30 * MIN);
  });

  it('refuses under 15 minutes, names the value and the way out', () => {
    const [problem] = problemsOf({ STATS_INTERVAL: '899s' });
    expect(problem).toMatch(/^STATS_INTERVAL: 899 s /);
    expect(problem).toContain('at least 15 min');
    expect(problem).toContain('STATS_ALLOW_SHORT_INTERVAL=true');
    expect(problem).toContain('(got "899s")');
    expect(problemsOf({ STATS_INTERVAL: '5s' })[0]).toMatch(/^STATS_INTERVAL: 5 s /);
  });

  it('allows a short interval with STATS_ALLOW_SHORT_INTERVAL, but never under the 2 s route limit', () => {
    const allow = { STATS_ALLOW_SHORT_INTERVAL: 'true' };
    expect(loadConfig({ ...allow, STATS_INTERVAL: '1m' }).stats).toMatchObject({
      intervalMs: MIN,
      allowShortInterval: true,
    });
    expect(loadConfig({ ...allow, STATS_INTERVAL: '2s' }).stats.intervalMs).toBe(2_000);
    const [problem] = problemsOf({ ...allow, STATS_INTERVAL: '1500ms' });
    expect(problem).toContain('1500 ms');
    expect(problem).toContain('at least 2 s');
  });

  it('refuses nonsense and lengths a timer cannot wait, once each', () => {
    for (const value of ['0', '-1', 'soon', '1 fortnight']) {
      expect(problemsOf({ STATS_INTERVAL: value, STATS_ALLOW_SHORT_INTERVAL: 'true' })).toEqual([
        `STATS_INTERVAL: expected a duration such as 30m, 900s or 1h (got ${JSON.stringify(value)})`,
      ]);
    }
    expect(problemsOf({ STATS_INTERVAL: `${30 * 24}h` })).toEqual([
      'STATS_INTERVAL: 43200 min is longer than a timer can wait (about 24 days) (got "720h")',
    ]);
    expect(problemsOf({ STATS_FIRST_DELAY: `${30 * 24}h` })).toEqual([expect.stringContaining('24 days')]);
  });

  it('is not judged against a STATS_ALLOW_SHORT_INTERVAL that is itself bad', () => {
    expect(problemsOf({ STATS_INTERVAL: '1m', STATS_ALLOW_SHORT_INTERVAL: 'maybe' })).toEqual([
      'STATS_ALLOW_SHORT_INTERVAL: expected true or false (got "maybe")',
    ]);
  });
});

describe('an empty variable is unset', () => {
  it('for every variable the schema reads: the default applies, nothing is refused', () => {
    const variables = Object.keys(SCHEMA.shape);
    for (const blank of ['', '   ', '\t']) {
      const env = Object.fromEntries(variables.map((name) => [name, blank]));
      expect(loadConfig(env)).toEqual(loadConfig({}));
    }
  });

  describe('readEnvironment', () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    function directory(files: Record<string, string>): string {
      dir = mkdtempSync(join(tmpdir(), 'config-'));
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      return dir;
    }

    it('takes a variable empty in the environment from .env', () => {
      const cwd = directory({ '.env': 'HTTP_PORT=9100\nLOG_LEVEL=debug\n' });
      const env = readEnvironment(cwd, { HTTP_PORT: '', LOG_LEVEL: 'warn' });
      expect(loadConfig(env)).toMatchObject({ httpPort: 9100, logLevel: 'warn' });
    });

    it("keeps the image's defaults under an env file's empty variables", () => {
      // `docker run --env-file .env` with the example's `HTTP_PORT=` sets it to '' in the process.
      const cwd = directory({ '.env.defaults': 'HTTP_PORT=8080\nDATA_DIR=/app/data\n' });
      const env = readEnvironment(cwd, { HTTP_PORT: '', DATA_DIR: ' ' });
      expect(loadConfig(env)).toMatchObject({ httpPort: 8080, dataDir: '/app/data' });
    });

    it('lets the environment win over .env, and .env over the defaults', () => {
      const cwd = directory({
        '.env': 'HTTP_PORT=9100\nHTTP_HOST=127.0.0.1\nDATA_DIR=\n',
        '.env.defaults': 'HTTP_PORT=8080\nHTTP_HOST=0.0.0.0\nDATA_DIR=/app/data\n',
      });
      const env = readEnvironment(cwd, { HTTP_PORT: '9200' });
      expect(loadConfig(env)).toMatchObject({ httpPort: 9200, httpHost: '127.0.0.1', dataDir: '/app/data' });
    });
  });
});

describe('tokens', () => {
  const secret = 'abcDEF123.ghiJKL456-mno_pqr';

  it('trims whitespace around a token', () => {
    const config = loadConfig({ DIRECTORY_TOKEN: `  ${secret}\n`, DISCORD_TOKEN: `\t${secret} ` });
    expect(config.directory.token).toBe(secret);
    expect(config.discord.token).toBe(secret);
  });

  it('refuses a line break, a space or a character no token has inside, without echoing it', () => {
    const cases: Array<[string, string]> = [
      [`${secret}\n${secret}`, 'a line break'],
      [`${secret}\r\n${secret}`, 'a line break'],
      [`${secret} ${secret}`, 'a space'],
      [`${secret}\t${secret}`, 'a space'],
      [`${secret}\u00a0${secret}`, 'a space'],
      [`${secret}\u0000${secret}`, 'a control or non-ASCII character'],
      [`${secret}\u2019${secret}`, 'a control or non-ASCII character'],
    ];
    for (const name of ['DIRECTORY_TOKEN', 'DISCORD_TOKEN']) {
      for (const [value, slip] of cases) {
        const message = messageOf({ [name]: value, LOG_LEVEL: 'loud' });
        expect(message).toContain(`${name}: expected the token alone, as one word: it has ${slip} inside`);
        expect(message).toContain('(value hidden)');
        expect(message).toContain('LOG_LEVEL:');
        expect(message).not.toContain(secret);
      }
    }
  });
});

describe('DIRECTORY_API_URL', () => {
  it('refuses an address that ends in the version, which the client adds itself', () => {
    for (const [url, version] of [
      ['http://127.0.0.1:8787/v2', 'v2'],
      ['http://127.0.0.1:8787/v1/', 'v1'],
      ['https://api.boticord.top/V2', 'V2'],
    ]) {
      expect(problemsOf({ DIRECTORY_API_URL: url })).toEqual([
        `DIRECTORY_API_URL: expected the address without the version: remove the /${version} at its end ` +
          `(DIRECTORY_API_VERSION chooses the version) (got ${JSON.stringify(url)})`,
      ]);
    }
  });

  it('keeps an address with a path of its own', () => {
    expect(loadConfig({ DIRECTORY_API_URL: 'http://127.0.0.1:8787/proxy/' }).directory.baseUrl).toBe(
      'http://127.0.0.1:8787/proxy',
    );
  });
});

describe('HTTP_HOST and HTTP_PORT', () => {
  it('takes IP addresses and host names', () => {
    for (const host of ['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'bot-1.internal']) {
      expect(loadConfig({ HTTP_HOST: host }).httpHost).toBe(host);
    }
  });

  it('refuses a port, a scheme or brackets in the host', () => {
    for (const host of ['localhost:8080', 'http://0.0.0.0', '[::1]', '0.0.0.0/0', 'two words']) {
      expect(problemsOf({ HTTP_HOST: host })).toEqual([
        'HTTP_HOST: expected an IP address (such as 0.0.0.0, 127.0.0.1 or ::) or a host name, without a port ' +
          `(got ${JSON.stringify(host)})`,
      ]);
    }
  });

  it('refuses a port that is not a whole number from 0 to 65535', () => {
    expect(loadConfig({ HTTP_PORT: ' 8080 ' }).httpPort).toBe(8080);
    for (const port of ['65536', '-1', '80.5', '1e3', '0x50', 'http']) {
      expect(problemsOf({ HTTP_PORT: port })).toEqual([
        `HTTP_PORT: expected a port from 0 to 65535 (got ${JSON.stringify(port)})`,
      ]);
    }
  });
});

describe('DATABASE_URL', () => {
  it('takes a postgres:// or postgresql:// URL, as given', () => {
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    for (const url of ['postgres://bot:pw@db:5432/bot', 'postgresql://bot@127.0.0.1/bot?sslmode=require']) {
      expect(loadConfig({ DATABASE_URL: ` ${url} ` }).databaseUrl).toBe(url);
    }
  });

  it('refuses anything else without showing it: it may hold a password', () => {
    for (const [url, starts] of [
      ['mysql://bot:hunter2-secret@db/bot', '; this one starts with mysql:'],
      ['hunter2-secret:bot@db/bot', ''],
      ['hunter2-secret', ''],
    ] as const) {
      const message = messageOf({ DATABASE_URL: url });
      expect(message).toContain(
        'DATABASE_URL: expected a PostgreSQL URL, postgres://user:password@host:port/database ' +
          `(or postgresql://)${starts} (value hidden)`,
      );
      expect(message).not.toContain('hunter2-secret');
    }
  });

  it('gives the logger its password to scrub, in every form a line may carry it', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://bot:p%40ss-w0rd@db/bot?password=other-pass' });
    expect(secretsOf(config)).toEqual(expect.arrayContaining(['p%40ss-w0rd', 'p@ss-w0rd', 'other-pass']));
    expect(secretsOf(loadConfig({ DATABASE_URL: 'postgres://bot@db/bot' }))).toEqual([]);
  });
});

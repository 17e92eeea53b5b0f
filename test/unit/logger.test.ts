import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, secretsOf } from '../../src/config/env.js';
import { DirectoryClient } from '../../src/directory/client.js';
import { createLogger } from '../../src/log/logger.js';

const TOKEN = 'tok_9f8e7d6c5b4a3928170615aabbccddeeff';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, stream };
}

describe('log lines in a terminal', () => {
  it('escape the controls JSON leaves raw (DEL, C1, bidi) and still parse to what was logged', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    const hostile = 'Bot not found\u009b2J\u202Eevil\u2066x\u2069\u007f\u001b]0;t\u0007';
    log.warn({ message: hostile }, 'the directory said');
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(line.trimEnd()).not.toMatch(/[\p{Cc}\p{Bidi_Control}]/u);
    expect(line.endsWith('\n')).toBe(true);
    expect((JSON.parse(line) as { message: string }).message).toBe(hostile);
  });
});

describe('log redaction', () => {
  it('removes the token from fields, headers, error messages, stacks and causes', () => {
    const { lines, stream } = capture();
    const log = createLogger({ level: 'trace', secrets: [TOKEN], destination: stream });
    const err = new Error(`request failed with Authorization: Bot ${TOKEN}`, {
      cause: new Error(`inner ${TOKEN}`),
    });
    log.error({ err, token: TOKEN, headers: { authorization: `Bot ${TOKEN}` } }, 'failed');
    log.info({ req: { headers: { authorization: TOKEN } }, config: { directory: { token: TOKEN } } }, 'req');
    log.warn(`message with ${TOKEN} inline`);
    log.debug({ nested: { deeper: { value: `x${TOKEN}x` } } }, 'deep');
    const out = lines.join('');
    expect(lines.length).toBe(4);
    expect(out).not.toContain(TOKEN);
    expect(out).toContain('[REDACTED]');
  });

  it("removes DATABASE_URL's password, written in the URL's encoding or not", () => {
    const { lines, stream } = capture();
    const config = loadConfig({ DATABASE_URL: 'postgres://bot:s3cret%2Fpass@db:5432/bot' });
    const log = createLogger({ secrets: secretsOf(config), destination: stream });
    log.warn({ err: new Error(`cannot connect to ${config.databaseUrl}`) }, 'password s3cret/pass refused');
    const out = lines.join('');
    expect(out).not.toContain('s3cret');
    expect(out).toContain('postgres://bot:[REDACTED]@db:5432/bot');
  });

  it('cuts interaction tokens out of webhook and callback URLs', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    const interactionToken = `aW50ZXJhY3Rpb246${'x'.repeat(60)}`;
    log.warn(
      {
        url: `https://discord.com/api/v10/webhooks/1234567890123456789/${interactionToken}/messages/@original`,
      },
      `POST /interactions/1234567890123456789/${interactionToken}/callback failed`,
    );
    expect(lines.join('')).not.toContain(interactionToken);
    expect(lines.join('')).toContain('/webhooks/1234567890123456789/[REDACTED]/messages/@original');
  });

  it('keeps the token out of a logged request failure from the client', async () => {
    const { lines, stream } = capture();
    const log = createLogger({ level: 'trace', secrets: [TOKEN], destination: stream });
    // Nothing listens on port 9 of the loopback: the request fails at connect.
    const client = new DirectoryClient({
      baseUrl: 'http://127.0.0.1:9',
      version: 'v2',
      token: TOKEN,
      maxRetries: 0,
      rateLimits: false,
    });
    const err = await client.getBotComments('724663360934772797').catch((e: unknown) => e);
    await client.close();
    log.error({ err }, 'directory request failed');
    const out = lines.join('');
    expect(out).toContain('Unavailable');
    expect(out).not.toContain(TOKEN);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
    expect(String((err as Error).stack)).not.toContain(TOKEN);
  });
});

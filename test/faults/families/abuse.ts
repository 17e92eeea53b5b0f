/**
 * A rows: the webhook receiver abused, through the real bot, on SQLite and on PostgreSQL. A flood
 * of wrong keys from the operator's reverse proxy's address never holds the directory's deliveries
 * back (A1); one noisy server with a thousand events waiting, its channel slow, neither starves
 * another server's next event nor gets past its cap of events waiting (A2, issue 23).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { type Engine, openStore } from '../../../src/store/index.js';
import { makeGuild, makeTextChannel, type PostedMessage } from '../../discord/index.js';
import { setUpWebhook } from '../../e2e/harness.js';
import { IDS } from '../../emulator/index.js';
import { freshPlace } from '../../store/places.js';
import { viewOf } from '../../support/layout-view.js';
import { eventually } from '../../support/wait.js';
import { inHarness } from '../fixtures.js';
import { track } from '../helpers.js';
import type { Family, Row } from '../runner.js';

const ANNA = '310000000000000001';
const BORIS = '310000000000000002';
const COMMENT_TITLE = '💬 New comment on the directory';

function descriptionOf(m: PostedMessage): string | undefined {
  return viewOf(m.body).description;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- A1: a flood of wrong keys through the operator's proxy ------------------------------------

const KEY = 'hk_7Fq2xVb9LmN4pR8sT1wZ';
/** Wrong keys sent, 20 at a time, and the directory's own deliveries meanwhile. */
const GUESSES = 400;
const DELIVERIES = 20;

function floodRow(engine: Engine): Row {
  const onPostgres = engine === 'postgres';
  return {
    id: onPostgres ? 'A1pg' : 'A1',
    postgres: onPostgres,
    fault: `${GUESSES} wrong keys through the operator's proxy while the directory delivers${onPostgres ? ' (PostgreSQL)' : ''}`,
    expected: 'the flood cut off at the source limit (401 then 429); every delivery 200, each announced once',
    timeoutMs: 40_000,
    run: async () => {
      const place = await freshPlace(engine);
      const events = makeTextChannel({ name: 'directory-events' });
      const guild = makeGuild({ id: IDS.serverFresh, name: 'Behind a proxy', channels: [events] });
      let proxy: Server | undefined;
      const close = track(async () => {
        await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
        await place.remove();
      });
      try {
        return await inHarness(
          {
            guilds: [guild],
            // The default limits (30 per 10 s), and one proxy in front, as docs/webhooks.md advises.
            env: { ...place.env, WEBHOOK_PORT: '0', WEBHOOK_HOST: '127.0.0.1', TRUST_PROXY: '1' },
          },
          async (h, c) => {
            const target = `http://127.0.0.1:${h.bot.webhookPort()}`;
            // The operator's reverse proxy: it passes the delivery on and appends the address it saw.
            const server = createServer((req, res) => {
              void (async () => {
                const chunks: Buffer[] = [];
                for await (const chunk of req) chunks.push(chunk as Buffer);
                const seen = req.headers['x-forwarded-for'];
                const answer = await request(`${target}${req.url ?? '/'}`, {
                  method: 'POST',
                  headers: {
                    'content-type': String(req.headers['content-type']),
                    'x-hook-key': String(req.headers['x-hook-key']),
                    'x-forwarded-for': [seen, req.socket.remoteAddress].filter(Boolean).join(', '),
                  },
                  body: Buffer.concat(chunks),
                });
                await answer.body.dump();
                res.writeHead(answer.statusCode).end();
              })().catch(() => res.writeHead(502).end());
            });
            proxy = server;
            await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
            const proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/directory/${guild.id}`;
            await setUpWebhook(h, { guildId: guild.id, key: KEY, channelId: events.id, url: proxyUrl });

            const before = h.discord.channelMessages(events.id).length;
            const base = Date.now() - 60_000;
            const flood = new Map<number, number>();
            const guesses = async () => {
              for (let i = 0; i < GUESSES; i += 20) {
                await Promise.all(
                  Array.from({ length: 20 }, async (_, j) => {
                    // The attacker's own X-Forwarded-For, to pass for many sources: the proxy appends the truth.
                    const status = await request(proxyUrl, {
                      method: 'POST',
                      headers: {
                        'content-type': 'application/json',
                        'x-hook-key': `guess-${i + j}`,
                        'x-forwarded-for': `198.51.100.${(i + j) % 250}`,
                      },
                      body: '{"type":"test_webhook_message","data":{}}',
                    }).then(async (res) => {
                      await res.body.dump();
                      return res.statusCode;
                    });
                    flood.set(status, (flood.get(status) ?? 0) + 1);
                  }),
                );
              }
            };
            const real = async () => {
              const statuses: number[] = [];
              for (let i = 0; i < DELIVERIES; i++) {
                statuses.push(
                  await h.emu.webhooks.comment(guild.id, 'new', {
                    user: ANNA,
                    at: base + i,
                    new: `real ${i}`,
                  }),
                );
                await sleep(25);
              }
              return statuses;
            };
            const timedGuesses = async (): Promise<number> => {
              const started = Date.now();
              await guesses();
              return Date.now() - started;
            };
            const [floodMs, statuses] = await Promise.all([timedGuesses(), real()]);
            c.equal(statuses, Array(DELIVERIES).fill(200), "the directory's deliveries");
            // The flood was cut off at the source's limit: 30 refused per 10 s, the rest 429. It
            // takes a second or two; on a loaded machine longer, and each 10 s begun lets 30 more in.
            c.equal([...flood.keys()].sort(), [401, 429], 'statuses of the flood');
            const refused = flood.get(401) ?? 0;
            const allowed = 30 * (Math.ceil(floodMs / 10_000) + 1);
            c.that(
              refused >= 30 && refused <= allowed,
              `${refused} wrong keys answered 401 in ${floodMs} ms, not 30 to ${allowed}`,
            );
            await eventually(
              () => (h.discord.channelMessages(events.id).length >= before + DELIVERIES ? true : undefined),
              20_000,
              'twenty announcements',
            );
            await sleep(500);
            const texts = h.discord.channelMessages(events.id).slice(before).map(descriptionOf);
            c.equal(
              texts,
              Array.from({ length: DELIVERIES }, (_, i) => `> real ${i}`),
              'the announcements',
            );
            const delivered = statuses.filter((s) => s === 200).length;
            return (
              `flood ${GUESSES}: 401×${refused}, 429×${flood.get(429) ?? 0}; ` +
              `deliveries ${delivered}/${DELIVERIES} 200, ${texts.length} announced, in order`
            );
          },
          { channelPosts: true },
        );
      } finally {
        await close();
      }
    },
  };
}

// ---- A2: one noisy server and the others -------------------------------------------------------

/** The noisy server's events: as many as its cap, so the next one is over it. */
const WAITING = 1_000;

function noisyRow(engine: Engine): Row {
  const onPostgres = engine === 'postgres';
  return {
    id: onPostgres ? 'A2pg' : 'A2',
    postgres: onPostgres,
    fault: `one server with ${WAITING} events waiting, its channel slow${onPostgres ? ' (PostgreSQL)' : ''}`,
    expected:
      "another server's next event announced within 5 s; past the cap, 429 and nothing stored; a repeat 200",
    timeoutMs: 60_000,
    run: async () => {
      const place = await freshPlace(engine);
      const store = await openStore(place.options).catch(async (err: unknown) => {
        await place.remove();
        throw err;
      });
      const close = track(async () => {
        await store.close();
        await place.remove();
      });
      const noisyChannel = makeTextChannel({ name: 'directory-events' });
      const quietChannel = makeTextChannel({ name: 'directory-events' });
      const noisy = makeGuild({ name: 'Noisy', channels: [noisyChannel] });
      const quiet = makeGuild({ name: 'Quiet', channels: [quietChannel] });
      /** Events of a server in the store, whatever their state. */
      const stored = async (guildId: string): Promise<number> => {
        const rows = await store.run((db) =>
          db.selectFrom('webhook_events').select('id').where('guild_id', '=', guildId).execute(),
        );
        return rows.length;
      };
      try {
        return await inHarness(
          {
            guilds: [noisy, quiet],
            env: {
              ...place.env,
              WEBHOOK_PORT: '0',
              WEBHOOK_HOST: '127.0.0.1',
              // The source limit out of the way: what is tested is the server's own.
              WEBHOOK_RATE_LIMIT: '100000/1000',
              WEBHOOK_SERVER_PENDING: String(WAITING),
              WEBHOOK_SERVER_RATE: '100000/60000',
            },
          },
          async (h, c) => {
            await setUpWebhook(h, {
              guildId: noisy.id,
              key: 'hk_noisy-server-key-0001',
              channelId: noisyChannel.id,
            });
            await setUpWebhook(h, {
              guildId: quiet.id,
              key: 'hk_quiet-server-key-0002',
              channelId: quietChannel.id,
            });
            const comment = (guildId: string, user: string, at: number, text: string) =>
              h.emu.webhooks.comment(guildId, 'new', { user, at, new: text });
            /** When the noisy server's events were written on the directory (a millisecond apart). */
            const base = Date.now() - 3_600_000;
            try {
              // The noisy server's channel is slow: Discord holds its posts.
              h.discord.holdPosts(noisyChannel.id);
              const refused: number[] = [];
              for (let i = 0; i < WAITING; i += 50) {
                const statuses = await Promise.all(
                  Array.from({ length: 50 }, (_, j) =>
                    comment(noisy.id, ANNA, base + i + j, `comment ${i + j}`),
                  ),
                );
                refused.push(...statuses.filter((s) => s !== 200));
              }
              // Which answers, when any (0: the receiver not reached), to tell a load from a refusal.
              c.equal(
                refused.length,
                0,
                `the noisy server's deliveries not answered 200${refused.length > 0 ? ` (${[...new Set(refused)].join(', ')})` : ''}`,
              );
              const waiting = await stored(noisy.id);
              c.equal(waiting, WAITING, "the noisy server's events stored");
              // Its first is being posted, the rest wait behind it.
              await h.discord.waitForHeldPost(noisyChannel.id, 10_000);

              const quietBefore = h.discord.channelMessages(quietChannel.id).length;
              const started = Date.now();
              c.equal(
                await comment(quiet.id, BORIS, Date.now() - 1_000, 'Over here'),
                200,
                'the quiet delivery',
              );
              const announced = await h.discord.waitForMessage(
                quietChannel.id,
                (m) => descriptionOf(m) === '> Over here',
                5_000,
              );
              const tookMs = Date.now() - started;
              c.that(tookMs < 5_000, `the quiet server's event announced after ${tookMs} ms`);
              c.equal(
                h.discord.channelMessages(quietChannel.id).length,
                quietBefore + 1,
                'quiet channel messages',
              );
              c.equal(viewOf(announced.body).title, COMMENT_TITLE, 'the announcement');
              // The noisy server's channel is still stuck on its first: its events did not go first.
              const noisyComments = h.discord
                .channelMessages(noisyChannel.id)
                .filter((m) => viewOf(m.body).title === COMMENT_TITLE);
              c.equal(noisyComments.length, 0, "the noisy server's comments posted");

              // Past its cap: 429 and nothing stored; delivered again, stored already, so 200.
              const over = await comment(noisy.id, ANNA, Date.now() - 1_000, 'one too many');
              c.equal(over, 429, 'the delivery past the cap');
              c.equal(await stored(noisy.id), WAITING, "the noisy server's events stored after the 429");
              // Delivered again: stored already, so answered 200 (the directory does not try it again).
              const repeat = await comment(noisy.id, ANNA, base, 'comment 0');
              c.equal(repeat, 200, 'the repeated delivery');
              c.equal(await stored(noisy.id), WAITING, "the noisy server's events stored after the repeat");
              const quietStored = await stored(quiet.id);
              const still = await comment(quiet.id, BORIS, Date.now() - 500, 'Still here');
              c.equal(still, 200, "the quiet server's next delivery");
              c.equal(await stored(quiet.id), quietStored + 1, "the quiet server's events stored");
              return (
                `${waiting} waiting, the other server's event announced in ${tookMs} ms, ` +
                `the noisy channel ${noisyComments.length} posted; past the cap ${over}, repeat ${repeat}, ` +
                `the other server's next ${still}`
              );
            } finally {
              await h.discord.releasePosts(noisyChannel.id, 'drop');
            }
          },
          { channelPosts: true },
        );
      } finally {
        await close();
      }
    },
  };
}

export const webhookAbuse: Family = {
  title: 'the webhook receiver abused',
  // After the other numbered stages: a thousand deliveries would crowd their timings.
  stage: 4,
  rows: [floodRow('sqlite'), noisyRow('sqlite'), floodRow('postgres'), noisyRow('postgres')],
};

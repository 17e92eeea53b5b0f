/**
 * The directory's webhooks end to end, on SQLite and on PostgreSQL: /settings webhook (the key
 * never shown again, never logged, stored only hashed), the emulator delivering as the directory
 * does to the bot's receiver on loopback, every bad request refused with nothing stored, the same
 * event delivered twice announced once, comments announced as Components V2 layouts that ping nobody, an up
 * given on the site recorded in the history and moving the reminder, and 200 hostile comment
 * texts (every hostile piece) through the whole path; all 1,000 are rendered in
 * test/unit/webhooks/hostile-comments.test.ts. A flood of wrong keys through a reverse proxy, and
 * one noisy server beside the others, are rows A1 and A2 of the fault suite
 * (test/faults/families/abuse.ts).
 */
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import {
  type APIEmbed,
  type APIApplicationCommandInteractionDataOption as CommandOption,
  MessageFlags,
  PermissionFlagsBits,
} from 'discord.js';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  HistoryRepository,
  openStore,
  ReminderRepository,
  SettingsRepository,
  type Store,
  WebhookRepository,
} from '../../src/store/index.js';
import {
  botRoleOf,
  ChannelKind,
  commandOption,
  type GuildFixture,
  makeGuild,
  makeTextChannel,
  type PostedMessage,
} from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { HOSTILE_PIECES, hostileTexts } from '../support/hostile-texts.js';
import { asEmbed, viewOf } from '../support/layout-view.js';
import { eventually } from '../support/wait.js';
import {
  type Answer,
  embedOf,
  embedText,
  type Harness,
  mentionProblems,
  privateMessage,
  secretLeaks,
  startHarness,
} from './harness.js';

const NOBODY = { everyone: false, users: [], roles: [] };
const KEY = 'hk_7Fq2xVb9LmN4pR8sT1wZ';
const OTHER_GUILD = '300000000000000099';
const anna = { id: '310000000000000001', username: 'anna', global_name: 'Анна' };
const boris = { id: '310000000000000002', username: 'boris' };

describe.each(ENGINES)("the directory's webhooks (%s)", (engine) => {
  const events = makeTextChannel({ name: 'directory-events' });
  const reminders = makeTextChannel({ name: 'reminders', position: 1 });
  const voice = makeTextChannel({ name: 'Voice', type: ChannelKind.GuildVoice, position: 2 });
  const guild = makeGuild({
    id: IDS.serverFresh,
    name: 'Свежий сервер',
    channels: [events, reminders, voice],
  });
  let h: Harness;
  let place: Place;
  let store: Store;
  let hookUrl: string;
  let setUpText: string;

  beforeAll(async () => {
    place = await freshPlace(engine);
    store = await openStore(place.options);
    h = await startHarness({
      guilds: [guild],
      emulator: { cooldownMs: 3_600_000 },
      env: {
        ...place.env,
        WEBHOOK_PORT: '0',
        WEBHOOK_HOST: '127.0.0.1',
        PUBLIC_URL: 'https://bot.example.test/',
        WEBHOOK_RATE_LIMIT: '100000/1000',
        // 200 comments of one server at once (the hostile texts): its own limits out of the way.
        WEBHOOK_SERVER_PENDING: '2000',
        WEBHOOK_SERVER_RATE: '100000/1000',
      },
    });
    h.secrets.add(KEY);
    hookUrl = `http://127.0.0.1:${h.bot.webhookPort()}/hooks/directory/${guild.id}`;
    const answer = await settingsRun('webhook', [
      commandOption.string('key', KEY),
      commandOption.channel('channel', events.id),
    ]);
    expect(answer.outcome).toBe('webhook-on');
    setUpText = embedText(embedOf(privateMessage(answer)));
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await store?.close();
    await place?.remove();
  });
  beforeEach(() => {
    h.emu.webhooks.set(guild.id, { url: hookUrl, key: KEY });
  });

  /** /settings <sub> by a member allowed to manage the server (Discord checked that already). */
  function settingsRun(sub: string, options: CommandOption[] = []): Promise<Answer> {
    return h.run({
      guildId: guild.id,
      name: 'settings',
      options: [commandOption.subcommand(sub, options)],
      permissions: PermissionFlagsBits.ManageGuild,
    });
  }

  function posts(): PostedMessage[] {
    return h.discord.channelMessages(events.id);
  }

  async function stored(): Promise<number> {
    const rows = await store.run((db) => db.selectFrom('webhook_events').select('id').execute());
    return rows.length;
  }

  /** Waits until `n` messages more than `before` are in the events channel, then a moment more. */
  async function announced(before: number, n: number, timeoutMs = 10_000): Promise<PostedMessage[]> {
    await eventually(
      () => (posts().length >= before + n ? true : undefined),
      timeoutMs,
      `${n} announcements`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    return posts().slice(before);
  }

  /** An announcement as read: a Components V2 layout (the flag set, no embed) seen as an embed. */
  function embedIn(message: PostedMessage | undefined): APIEmbed {
    if (!message) throw new Error('no message');
    expect(message.body.flags).toBe(MessageFlags.IsComponentsV2);
    expect(message.embeds).toEqual([]);
    return asEmbed(message.body) as APIEmbed;
  }

  it('/settings webhook: a bad key (two words, 15 characters) is refused; the URL to paste is answered privately; the key is kept only hashed', async () => {
    const refused = await settingsRun('webhook', [
      commandOption.string('key', 'two words'),
      commandOption.channel('channel', events.id),
    ]);
    expect(refused.outcome).toBe('refused:webhook-key');
    // 15 characters: too short to be the directory's key, and too easy to guess.
    const short = await settingsRun('webhook', [
      commandOption.string('key', 'hk_0123456789a'.padEnd(15, 'b')),
      commandOption.channel('channel', events.id),
    ]);
    expect(short.outcome).toBe('refused:webhook-key');
    expect(embedText(embedOf(privateMessage(short)))).toContain('16 to 256 long');

    const shown = await settingsRun('show');
    const text = embedText(embedOf(privateMessage(shown)));
    expect(text).toContain(`On: events in <#${events.id}>`);
    expect(text).not.toContain(KEY);

    // The set-up of beforeAll: its confirmation in the channel, its answer with the whole URL.
    const confirmation = posts().find(
      (m) => embedIn(m).title === "🔗 The directory's events will be posted here",
    );
    expect(confirmation?.pings).toEqual(NOBODY);
    expect(setUpText).toContain(`\`https://bot.example.test/hooks/directory/${guild.id}\``);
    expect(setUpText).toContain(`<#${events.id}>`);
    expect(setUpText).not.toContain(KEY);
    const row = await store.run((db) =>
      db
        .selectFrom('directory_webhooks')
        .selectAll()
        .where('guild_id', '=', guild.id)
        .executeTakeFirstOrThrow(),
    );
    expect(row.channel_id).toBe(events.id);
    expect(JSON.stringify(row)).not.toContain(KEY);
    expect(row.key_hash).toMatch(/^[\w-]{43}$/);
    expect(secretLeaks(h)).toEqual([]);
  });

  it('/settings webhook in a voice channel: refused before anything is posted, the webhook kept as it was', async () => {
    const setUp = () =>
      store.run((db) =>
        db
          .selectFrom('directory_webhooks')
          .selectAll()
          .where('guild_id', '=', guild.id)
          .executeTakeFirstOrThrow(),
      );
    const before = await setUp();
    expect(before.channel_id).toBe(events.id);
    const answer = await settingsRun('webhook', [
      commandOption.string('key', `${KEY}-other`),
      commandOption.channel('channel', voice.id),
    ]);
    expect(answer.outcome).toBe('refused:channel-type');
    expect(embedText(embedOf(privateMessage(answer)))).toContain(
      `<#${voice.id}> is not a text or announcement channel of this server, so nothing was saved.`,
    );
    expect(h.discord.channelMessages(voice.id)).toEqual([]);
    expect(await setUp()).toEqual(before);
  });

  it('answers every bad request with nothing stored and nothing posted', async () => {
    const before = { stored: await stored(), posts: posts().length };
    const base = hookUrl.replace(/\/hooks\/.*/, '');
    const comment = JSON.stringify({
      type: 'new_server_comment',
      data: { user: anna.id, comment: { vote: { old: null, new: 1 }, old: null, new: 'hi' }, at: Date.now() },
    });
    const post = async (
      url: string,
      init: { method?: string; headers?: Record<string, string>; body?: string | Readable },
    ) => {
      const res = await request(url, {
        method: (init.method ?? 'POST') as 'POST',
        headers: init.headers,
        body: init.body,
      });
      const body = await res.body.text();
      return { status: res.statusCode, body, allow: res.headers.allow };
    };
    const json = { 'content-type': 'application/json', 'x-hook-key': KEY };
    const cases: Array<[string, Promise<{ status: number; body: string; allow?: unknown }>, number]> = [
      ['GET', post(hookUrl, { method: 'GET', headers: json }), 405],
      ['another path', post(`${base}/hooks/directory/not-a-guild`, { headers: json, body: comment }), 404],
      ['the root', post(`${base}/`, { headers: json, body: comment }), 404],
      [
        'a server with no webhook',
        post(hookUrl.replace(guild.id, OTHER_GUILD), { headers: json, body: comment }),
        401,
      ],
      ['no key', post(hookUrl, { headers: { 'content-type': 'application/json' }, body: comment }), 401],
      ['a wrong key', post(hookUrl, { headers: { ...json, 'x-hook-key': `${KEY}x` }, body: comment }), 401],
      [
        'text/plain',
        post(hookUrl, { headers: { ...json, 'content-type': 'text/plain' }, body: comment }),
        415,
      ],
      ['not JSON', post(hookUrl, { headers: json, body: '{"type":' }), 400],
      ['an array', post(hookUrl, { headers: json, body: '[]' }), 400],
      ['no type', post(hookUrl, { headers: json, body: '{"data":{}}' }), 400],
      [
        'an author that is not an id',
        post(hookUrl, { headers: json, body: comment.replace(anna.id, '<@&1>') }),
        400,
      ],
      [
        'a time far in the future',
        post(hookUrl, {
          headers: json,
          body: comment.replace(/"at":\d+/, `"at":${Date.now() + 86_400_000}`),
        }),
        400,
      ],
      [
        'a bump without its member',
        post(hookUrl, {
          headers: json,
          body: JSON.stringify({ type: 'new_server_bump', data: { at: Date.now() } }),
        }),
        400,
      ],
      [
        'a body over 64 KB',
        post(hookUrl, { headers: json, body: JSON.stringify({ type: 'x', pad: 'a'.repeat(70_000) }) }),
        413,
      ],
      [
        'a body over 64 KB, sent in chunks without a length',
        post(hookUrl, {
          headers: json,
          body: Readable.from(
            Array.from({ length: 40 }, (_, i) => (i === 0 ? '{"type":"' : 'a'.repeat(4_096))),
          ),
        }),
        413,
      ],
    ];
    for (const [what, answer, status] of cases) {
      const got = await answer;
      expect({ what, status: got.status, body: got.body }).toEqual({ what, status, body: '' });
      if (status === 405) expect(got.allow).toBe('POST');
    }
    // The bot's events are not this server's: answered, so the directory does not retry, not kept.
    const botEvent = await post(hookUrl, {
      headers: json,
      body: JSON.stringify({ type: 'new_bot_bump', data: { user: anna.id, at: Date.now() } }),
    });
    expect(botEvent.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await stored()).toBe(before.stored);
    expect(posts().length).toBe(before.posts);
    expect(h.unhandled).toEqual([]);
  });

  it('answers a declared body over 64 KB with 413 without reading it, and closes the connection', async () => {
    const port = h.bot.webhookPort()!;
    const started = Date.now();
    const answer = await new Promise<{ head: string; closed: boolean }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let head = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        head += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve({ head, closed: true }));
      socket.write(
        `POST /hooks/directory/${guild.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `X-Hook-Key: ${KEY}\r\nContent-Length: 104857600\r\n\r\n{"type":"new_server_comment"`,
      );
    });
    expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.head).toMatch(/connection: close/i);
    expect(answer.closed).toBe(true);
    // 100 MB were announced and never sent: the answer did not wait for them.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('says "webhook connected" for the test button, once even when delivered twice', async () => {
    const before = posts().length;
    expect(await Promise.all([h.emu.webhooks.test(guild.id), h.emu.webhooks.test(guild.id)])).toEqual([
      200, 200,
    ]);
    const [message, ...more] = await announced(before, 1);
    expect(more).toEqual([]);
    expect(embedIn(message).title).toBe('✅ Webhook connected');
    expect(message?.pings).toEqual(NOBODY);
  });

  it('announces a comment, its edit and its deletion in order, escaped, pinging nobody; a replay once', async () => {
    const before = posts().length;
    const at = Date.now() - 60_000;
    const text = '@everyone **great** server <@&310000000000000003> [free](https://evil.example/)';
    for (let i = 0; i < 3; i++) {
      expect(await h.emu.webhooks.comment(guild.id, 'new', { user: anna.id, at, new: text })).toBe(200);
    }
    await h.emu.webhooks.comment(guild.id, 'edit', {
      user: anna.id,
      at: at + 1_000,
      vote: { old: 1, new: -1 },
      old: text,
      new: 'Changed my mind',
    });
    await h.emu.webhooks.comment(guild.id, 'delete', {
      user: anna.id,
      at: at + 2_000,
      vote: { old: -1, new: null },
      old: 'Changed my mind',
      reason: 'moderation',
    });
    const [created, edited, deleted, ...more] = await announced(before, 3);
    expect(more).toEqual([]);
    for (const message of [created, edited, deleted]) {
      expect(message?.pings).toEqual(NOBODY);
      expect(message?.allowedMentions).toEqual({ parse: [] });
      expect(mentionProblems(message?.body ?? {})).toEqual([]);
    }
    const first = embedIn(created);
    expect(first.title).toBe('💬 New comment on the directory');
    expect(first.fields?.find((f) => f.name === 'Author')?.value).toBe(`<@${anna.id}>`);
    expect(first.fields?.find((f) => f.name === 'Vote')?.value).toBe('👍 For');
    expect(first.description).toContain('\\*\\*great\\*\\*');
    expect(first.description).not.toContain('[free](');
    expect(first.footer?.text).toBe(`<t:${Math.floor(at / 1000)}:F>`);
    const second = embedIn(edited);
    expect(second.title).toBe('✏️ A comment was edited');
    expect(second.fields?.find((f) => f.name === 'Vote')?.value).toBe('👍 For → 👎 Against');
    expect(second.fields?.find((f) => f.name === 'After')?.value).toBe('> Changed my mind');
    expect(second.fields?.find((f) => f.name === 'Before')?.value).toContain('great');
    const third = embedIn(deleted);
    expect(third.title).toBe('🗑️ A comment was deleted');
    expect(third.fields?.find((f) => f.name === 'Reason')?.value).toBe(
      "Removed by the directory's moderators",
    );
  });

  it('records an up given on the site in the history, not twice for an /up through the bot, and moves the reminder', async () => {
    await new SettingsRepository(store).update(guild.id, { reminderChannelId: reminders.id }, Date.now());
    // anna raises the server through the bot; the directory tells the webhook of that up too.
    const up = await h.run({ guildId: guild.id, name: 'up', user: anna });
    expect(up.outcome).toBe('success');
    await h.emu.webhooks.settled();
    expect(h.emu.webhooks.deliveries.at(-1)).toMatchObject({ type: 'new_server_bump', status: 200 });
    const history = new HistoryRepository(store);
    await eventually(
      async () => {
        const rows = await store.run((db) =>
          db.selectFrom('webhook_events').select('state').where('type', '=', 'new_server_bump').execute(),
        );
        return rows.length === 1 && rows[0]?.state === 'done' ? true : undefined;
      },
      10_000,
      'the bump to be handled',
    );
    expect((await history.members(guild.id, 0)).map((m) => [m.userId, m.ups])).toEqual([[anna.id, 1]]);
    const repo = new ReminderRepository(store);
    const first = await repo.getGuild(guild.id);
    expect(first?.cooldownMs).toBeGreaterThan(3_590_000);
    expect(first?.cooldownMs).toBeLessThanOrEqual(3_600_000);

    // boris raises it on the site half an hour later (as the directory's clock says).
    const siteUpAt = Date.now() + 5 * 60_000;
    expect(await h.emu.webhooks.bump(guild.id, boris.id, siteUpAt)).toBe(200);
    const moved = await eventually(
      async () => {
        const r = await repo.getGuild(guild.id);
        return r && r.dueAt !== first?.dueAt ? r : undefined;
      },
      10_000,
      'the reminder to move',
    );
    expect(moved.dueAt).toBe(siteUpAt + (first?.cooldownMs ?? 0));
    expect(moved.state).toBe('scheduled');
    const members = await history.members(guild.id, 0);
    expect(members.map((m) => [m.userId, m.ups])).toEqual([
      [anna.id, 1],
      [boris.id, 1],
    ]);
    const sources = await store.run((db) =>
      db.selectFrom('up_history').select(['user_id', 'source']).orderBy('at').execute(),
    );
    expect(sources).toEqual([
      { user_id: anna.id, source: 'bot' },
      { user_id: boris.id, source: 'webhook' },
    ]);
    // The same bump again: recorded once, the reminder where it is.
    expect(await h.emu.webhooks.bump(guild.id, boris.id, siteUpAt)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await history.members(guild.id, 0)).map((m) => m.ups)).toEqual([1, 1]);
    expect((await repo.getGuild(guild.id))?.dueAt).toBe(moved.dueAt);
  });

  it('an up on the site after a reminder was posted edits the reminder: who and how long after', async () => {
    await new SettingsRepository(store).update(guild.id, { reminderChannelId: reminders.id }, Date.now());
    const repo = new ReminderRepository(store);
    const dueAt = Date.now() + 200;
    await repo.scheduleGuild(guild.id, { dueAt, nextUpAt: dueAt, cooldownMs: 3_600_000 }, Date.now());
    h.bot.reminders.wake(dueAt);
    const posted = await h.discord.waitForMessage(reminders.id, (m) => m.receivedAt >= dueAt - 200, 5_000);
    expect(await h.emu.webhooks.bump(guild.id, boris.id, Date.now() + 1_000)).toBe(200);
    const edited = await eventually(
      () => h.discord.channelMessages(reminders.id).find((m) => m.id === posted.id && m.edits.length > 0),
      10_000,
      'the reminder edited',
    );
    expect(edited.edits).toHaveLength(1);
    expect(edited.edits[0]?.allowed_mentions).toEqual({ parse: [] });
    expect(viewOf(edited.message).prose).toEqual([
      posted.text,
      expect.stringMatching(new RegExp(`^✅ Upped by <@${boris.id}> \\d+ s after the reminder\\.$`)),
    ]);
  });

  it('a channel the bot may not post in: given up, told in /settings show, and cleared once it posts again', async () => {
    const botRole = botRoleOf(h.discord.guilds.get(guild.id) as GuildFixture, h.discord.botUser.id);
    if (!botRole) throw new Error('the stand-in gave the bot no role');
    h.discord.setChannelOverwrites(events.id, [
      { id: botRole.id, type: 'role', deny: PermissionFlagsBits.SendMessages },
    ]);
    const before = posts().length;
    const at = Date.now() - 1_000;
    expect(await h.emu.webhooks.comment(guild.id, 'new', { user: anna.id, at, new: 'unseen' })).toBe(200);
    const failed = await eventually(
      async () => {
        const row = await store.run((db) =>
          db
            .selectFrom('webhook_events')
            .select(['state', 'failure'])
            .where('id', 'like', `%:${at}`)
            .executeTakeFirst(),
        );
        return row?.state === 'failed' ? row : undefined;
      },
      10_000,
      'the event to be given up',
    );
    expect(failed.failure).toBe('missing-permission:SendMessages');
    expect(posts().length).toBe(before);
    const shown = await settingsRun('show');
    expect(shown.outcome).toBe('shown:problem');
    expect(embedText(embedOf(privateMessage(shown)))).toContain(
      `The bot could not announce the directory's events in <#${events.id}>: grant it **Send Messages** there`,
    );

    h.discord.setChannelOverwrites(events.id, []);
    expect(await h.emu.webhooks.comment(guild.id, 'new', { user: anna.id, at: at + 1, new: 'seen' })).toBe(
      200,
    );
    await announced(before, 1);
    await eventually(
      async () => ((await new WebhookRepository(store).get(guild.id))?.problem === null ? true : undefined),
      5_000,
      'the problem to be cleared',
    );
  });

  // What the store keeps of a text (NUL, lone surrogates) is each engine's, so both engines take
  // the first 200 of the hostile texts, which hold every hostile piece (checked), the whole way:
  // received, stored, announced, allowed_mentions honoured by the Discord stand-in, no warning.
  // What is said of a text (escaping, cutting, pings) does not depend on the engine: the volume,
  // all 1,000 texts through the same handler and renderer, is proven in
  // test/unit/webhooks/hostile-comments.test.ts, without Discord's 50 requests a second.
  const hostileCount = 200;
  it(`announces ${hostileCount} hostile comment texts: every one posted, none pings anyone, nothing crashes`, async () => {
    const texts = hostileTexts(hostileCount);
    expect(HOSTILE_PIECES.filter((piece) => !texts.some((text) => text.includes(piece)))).toEqual([]);
    const before = posts().length;
    const logFrom = h.entries().length;
    const base = Date.now() - 3_600_000;
    for (let i = 0; i < texts.length; i += 50) {
      const statuses = await Promise.all(
        texts
          .slice(i, i + 50)
          .map((text, j) =>
            h.emu.webhooks.comment(guild.id, 'new', { user: boris.id, at: base + i + j, new: text }),
          ),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    const messages = await announced(before, texts.length, 120_000);
    expect(messages).toHaveLength(texts.length);
    const problems = messages.flatMap((m, i) => {
      const embed = embedIn(m);
      const found = mentionProblems(m.body).map((p) => `${i}: ${p}`);
      if (JSON.stringify(m.pings) !== JSON.stringify(NOBODY))
        found.push(`${i}: pings ${JSON.stringify(m.pings)}`);
      const text = viewOf(m.body).prose.join('').length;
      if (text > 4_000) found.push(`${i}: ${text} characters of text, over Discord's 4000`);
      if (!embed.title) found.push(`${i}: no title`);
      return found;
    });
    expect(problems).toEqual([]);
    expect(h.unhandled).toEqual([]);
    const warnings = h
      .entries()
      .slice(logFrom)
      .filter((e) => e.level >= 40);
    expect(warnings).toEqual([]);
  }, 180_000);

  it('/settings webhook-off: the directory is refused from then on, nothing stored', async () => {
    const answer = await settingsRun('webhook-off');
    expect(answer.outcome).toBe('webhook-off');
    const before = await stored();
    expect(await h.emu.webhooks.test(guild.id)).toBe(401);
    expect(await stored()).toBe(before);
    const again = await settingsRun('webhook-off');
    expect(again.outcome).toBe('webhook-off:unchanged');
  });
});

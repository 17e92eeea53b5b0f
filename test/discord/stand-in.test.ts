import { once } from 'node:events';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  type Client,
  DiscordAPIError,
  EmbedBuilder,
  Events,
  type Interaction,
  MessageFlags,
} from 'discord.js';
import { Agent, request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { sleep } from '../support/wait.js';
import { type GuildFixture, makeGuild, makeGuilds, shardForGuild } from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();
const start = session.start;

const newClient = session.client;

async function ready(c: Client, token: string): Promise<void> {
  const isReady = once(c, Events.ClientReady);
  await c.login(token);
  await isReady;
}

/** Runs `handler` for every interaction; failures are collected so the test can assert on them. */
function onInteraction(c: Client, handler: (i: Interaction) => Promise<void>): Error[] {
  const failures: Error[] = [];
  c.on(Events.InteractionCreate, (i) => {
    handler(i).catch((error: unknown) =>
      failures.push(error instanceof Error ? error : new Error(String(error))),
    );
  });
  return failures;
}

function simplify(reqs: { method: string; path: string; status: number }[]): string[] {
  return reqs.map((r) => `${r.method} ${r.path.replace(/\/\d+\/[^/]+/, '/:id/:token')} ${r.status}`);
}

describe('Discord stand-in with an unmodified discord.js client', () => {
  it('connects one shard, caches every guild, and serves REST lookups', async () => {
    const guilds = makeGuilds(5, { memberCount: 120, channels: ['general', 'bots'] });
    const si = await start({ guilds });
    const c = newClient(si);
    await ready(c, si.token);

    expect(c.user?.id).toBe(si.botUser.id);
    expect(c.user?.bot).toBe(true);
    expect(c.application?.id).toBe(si.applicationId);
    expect(c.guilds.cache.size).toBe(5);
    for (const g of guilds) {
      const cached = c.guilds.cache.get(g.id);
      expect(cached?.available).toBe(true);
      expect(cached?.name).toBe(g.name);
      expect(cached?.memberCount).toBe(120);
      expect(cached?.channels.cache.map((ch) => ch.name).sort()).toEqual(['bots', 'general']);
      expect(cached?.members.me?.id).toBe(si.botUser.id);
    }
    expect(si.connectedShards()).toEqual([0]);

    const first = guilds[0]!;
    const fetched = await c.guilds.fetch({ guild: first.id, withCounts: true, force: true });
    expect(fetched.approximateMemberCount).toBe(120);
    expect(fetched.approximatePresenceCount).toBe(40);
    const owner = await c.users.fetch(first.owner_id, { force: true });
    expect(owner.id).toBe(first.owner_id);
    expect((await fetched.fetchOwner()).id).toBe(first.owner_id);
    await expect(c.guilds.fetch({ guild: '123456789012345678', force: true })).rejects.toMatchObject({
      code: 10004,
    });

    const registered = await c.application!.commands.set([
      { name: 'listing', description: 'Show a listing' },
      { name: 'vote', description: 'Vote for a bot' },
    ]);
    expect(registered.size).toBe(2);
    expect(si.commands().map((cmd) => (cmd as { name: string }).name)).toEqual(['listing', 'vote']);
    const put = si.requests.find(
      (r) => r.method === 'PUT' && r.path === `/applications/${si.applicationId}/commands`,
    );
    expect(put?.headers.authorization).toBe(`Bot ${si.token}`);
  });

  it("connects 4 shards with shards: 'auto' and spreads guilds like Discord", async () => {
    const guilds = makeGuilds(40);
    const si = await start({ guilds, shards: 4 });
    const c = newClient(si, { shards: 'auto' });
    await ready(c, si.token);

    expect(c.ws.shards.size).toBe(4);
    expect(c.guilds.cache.size).toBe(40);
    for (const g of guilds) expect(c.guilds.cache.get(g.id)?.shardId).toBe(shardForGuild(g.id, 4));
    expect(si.connectedShards()).toEqual([0, 1, 2, 3]);
    await si.waitForShards(4, 100);

    // Guilds joined and left after READY reach the right shard.
    const joined: GuildFixture = makeGuild({ name: 'Late guild' });
    const created = once(c, Events.GuildCreate);
    si.addGuild(joined);
    const [guild] = (await created) as [{ id: string; shardId: number }];
    expect(guild.id).toBe(joined.id);
    expect(guild.shardId).toBe(shardForGuild(joined.id, 4));
    const deleted = once(c, Events.GuildDelete);
    si.removeGuild(joined.id);
    await deleted;
    expect(c.guilds.cache.has(joined.id)).toBe(false);
  });

  it('records deferReply, editReply, an ephemeral followUp and deleteReply; view() shows them', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const c = newClient(si);
    const finished = new Promise<void>((resolve) => {
      onInteraction(c, async (i) => {
        if (!i.isChatInputCommand()) return;
        expect(i.commandName).toBe('listing');
        expect(i.options.getString('bot')).toBe('example');
        expect(i.guildId).toBe(guild!.id);
        expect(i.locale).toBe('de');
        await i.deferReply();
        await i.editReply({ embeds: [new EmbedBuilder().setTitle('Example bot').setDescription('A bot')] });
        await i.followUp({ content: 'only you', flags: MessageFlags.Ephemeral });
        await i.deleteReply();
        resolve();
      });
    });
    await ready(c, si.token);

    const handle = si.sendCommand({
      guildId: guild!.id,
      name: 'listing',
      locale: 'de',
      user: { id: '300000000000000001', username: 'alice' },
      options: [{ name: 'bot', type: 3, value: 'example' }],
    });
    expect(handle.delivery).toBe('sent');
    const first = await handle.firstResponse();
    expect(first.type).toBe(5);
    expect(first.at).toBeGreaterThan(handle.sentAt);
    await finished;

    expect(simplify(handle.requests())).toEqual([
      'POST /interactions/:id/:token/callback 204',
      'PATCH /webhooks/:id/:token/messages/@original 200',
      'POST /webhooks/:id/:token 200',
      'DELETE /webhooks/:id/:token/messages/@original 204',
    ]);
    const view = handle.view();
    expect(view.original?.deleted).toBe(true);
    expect(view.original?.embeds).toEqual([{ type: 'rich', title: 'Example bot', description: 'A bot' }]);
    expect(view.original?.flags).toBe(0);
    expect(view.followUps).toHaveLength(1);
    expect(view.followUps[0]).toMatchObject({ content: 'only you', flags: 64, deleted: false });
  });

  it('sends a burst back to back: each handle timed from its own dispatch, delivered in order', async () => {
    const guilds = makeGuilds(3);
    const si = await start({ guilds });
    const c = newClient(si);
    const seen: string[] = [];
    const failures = onInteraction(c, async (i) => {
      seen.push(i.id);
      if (i.isChatInputCommand()) await i.deferReply();
    });
    await ready(c, si.token);
    const before = performance.now();
    const burst = si.sendCommands(guilds.map((g) => ({ guildId: g.id, name: 'up' })));
    const after = performance.now();
    expect(burst.map((h) => h.delivery)).toEqual(['sent', 'sent', 'sent']);
    const sentAt = burst.map((h) => h.sentAt);
    expect(sentAt).toEqual([...sentAt].sort((a, b) => a - b));
    expect(sentAt[0]).toBeGreaterThanOrEqual(before);
    expect(sentAt[2]).toBeLessThanOrEqual(after);
    await Promise.all(burst.map((h) => h.firstResponse()));
    expect(seen).toEqual(burst.map((h) => h.id));
    expect(burst.map((h) => (h.payload as { guild_id?: string }).guild_id)).toEqual(guilds.map((g) => g.id));
    expect(failures).toEqual([]);
  });

  it('handles buttons with deferUpdate and update on the message they are attached to', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const c = newClient(si);
    const failures = onInteraction(c, async (i) => {
      if (i.isChatInputCommand()) {
        const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('next').setLabel('Next').setStyle(ButtonStyle.Primary),
        );
        const res = await i.reply({ content: 'page 1', components: [row], withResponse: true });
        expect(res.resource?.message?.content).toBe('page 1');
      } else if (i.isButton() && i.customId === 'next') {
        await i.deferUpdate();
        await i.editReply({ content: 'page 2' });
      } else if (i.isButton() && i.customId === 'last') {
        expect(i.message.content).toBe('page 2');
        await i.update({ content: 'page 3', components: [] });
      }
    });
    await ready(c, si.token);

    const command = si.sendCommand({ guildId: guild!.id, name: 'browse' });
    expect((await command.firstResponse()).type).toBe(4);
    const messageId = command.view().original!.id;
    expect(command.view().original?.components).toHaveLength(1);

    const next = si.sendButton({ guildId: guild!.id, customId: 'next', messageId });
    expect((await next.firstResponse()).type).toBe(6);
    await next.waitFor((r) => r.method === 'PATCH');
    expect(next.view().original).toMatchObject({ id: messageId, content: 'page 2', deleted: false });
    expect(command.view().original?.content).toBe('page 2');

    const last = si.sendButton({ guildId: guild!.id, customId: 'last', messageId });
    expect((await last.firstResponse()).type).toBe(7);
    expect(last.view().original).toMatchObject({ id: messageId, content: 'page 3', components: [] });

    // A button on a message the stand-in has not seen before is synthesized.
    const fresh = si.sendButton({ guildId: guild!.id, customId: 'next' });
    await fresh.waitFor((r) => r.method === 'PATCH');
    expect(fresh.view().original?.content).toBe('page 2');
    expect(failures).toEqual([]);
  });

  it("takes an autocomplete's answer only as choices within Discord's limits, and nothing else", async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const typing = () =>
      si.sendCommand({
        guildId: guild!.id,
        name: 'bot',
        autocomplete: true,
        options: [{ type: 3, name: 'ref', value: 'ke', focused: true } as never],
      });
    const post = (h: { id: string; token: string }, body: unknown) =>
      fetch(`${si.restUrl}/v10/interactions/${h.id}/${h.token}/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const choices = (n: number, name = 'kerdoku') =>
      Array.from({ length: n }, (_, i) => ({ name, value: `v${i}` }));
    const first = typing();
    expect(first.payload.type).toBe(4);
    expect((await post(first, { type: 5 })).status).toBe(400);
    expect((await post(first, { type: 8, data: { choices: choices(26) } })).status).toBe(400);
    expect((await post(first, { type: 8, data: { choices: choices(1, 'x'.repeat(101)) } })).status).toBe(400);
    expect(
      (await post(first, { type: 8, data: { choices: [{ name: 'a', value: 'v'.repeat(101) }] } })).status,
    ).toBe(400);
    expect((await post(first, { type: 8, data: { choices: choices(25) } })).status).toBe(204);
    expect((await first.firstResponse(1_000)).type).toBe(8);
  });

  it('answers like Discord to a second callback, an unknown interaction and an empty message', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const handle = si.sendCommand({ guildId: guild!.id, name: 'x' });
    expect(handle.delivery).toBe('dropped');
    const post = (path: string, body: unknown) =>
      fetch(`${si.restUrl}/v10${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const callback = `/interactions/${handle.id}/${handle.token}/callback`;
    expect((await post(callback, { type: 4, data: {} })).status).toBe(400);
    const ok = await post(`${callback}?with_response=true`, { type: 4, data: { content: 'hi' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ interaction: { id: handle.id, type: 2 }, resource: { type: 4 } });
    const again = await post(callback, { type: 4, data: { content: 'again' } });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({
      message: 'Interaction has already been acknowledged.',
      code: 40060,
    });
    const unknown = await post(`/interactions/${handle.id}/wrong-token/callback`, { type: 5 });
    expect(await unknown.json()).toEqual({ message: 'Unknown interaction', code: 10062 });
    const tooLong = await post(`/webhooks/${si.applicationId}/${handle.token}?wait=true`, {
      content: 'x'.repeat(2001),
    });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({
      code: 50035,
      errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });
    const noAuth = await fetch(`${si.restUrl}/v10/gateway/bot`);
    expect(noAuth.status).toBe(401);
    expect(await noAuth.json()).toEqual({ message: '401: Unauthorized', code: 0 });
  });

  it('makes discord.js reject a wrong token (REST 401 → TokenInvalid; gateway close 4004)', async () => {
    const si = await start({ guilds: makeGuilds(1) });
    const c = newClient(si);
    await expect(c.login('not-the-token')).rejects.toMatchObject({ code: 'TokenInvalid' });

    const ws = new WebSocket(`${si.gatewayUrl}?v=10&encoding=json`);
    const closed = once(ws, 'close');
    ws.on('message', (raw) => {
      const payload = JSON.parse(String(raw)) as { op: number };
      if (payload.op === 10) {
        ws.send(JSON.stringify({ op: 2, d: { token: 'nope', intents: 1, properties: {}, shard: [0, 1] } }));
      }
    });
    const [code] = (await closed) as [number];
    expect(code).toBe(4004);
  });

  for (const closeCode of [4000, 1006]) {
    it(`resumes after close ${closeCode}, replays missed events and keeps answering`, async () => {
      const [guild] = makeGuilds(1);
      const si = await start({ guilds: [guild!], heartbeatIntervalMs: 400 });
      const c = newClient(si);
      const failures = onInteraction(c, async (i) => {
        if (i.isChatInputCommand()) await i.reply({ content: `pong ${i.commandName}` });
      });
      await ready(c, si.token);
      const before = si.sendCommand({ guildId: guild!.id, name: 'before' });
      expect((await before.firstResponse()).type).toBe(4);

      const resumed = once(c.ws.shards.get(0)!, 'resumed');
      si.disconnectShard(0, closeCode);
      expect(si.connectedShards()).toEqual([]);
      const during = si.sendCommand({ guildId: guild!.id, name: 'during' });
      expect(during.delivery).toBe('queued');
      await resumed;
      expect(si.connectedShards()).toEqual([0]);
      expect(si.gatewayLog.filter((e) => e.kind === 'identify')).toHaveLength(1);
      expect(si.gatewayLog.some((e) => e.kind === 'resumed')).toBe(true);

      expect((await during.firstResponse()).type).toBe(4);
      if (closeCode === 4000) {
        // op 7 RECONNECT: discord.js closes with 4200 and resumes the same session.
        const again = once(c.ws.shards.get(0)!, 'resumed');
        si.requestReconnect(0);
        await again;
        expect(si.gatewayLog.filter((e) => e.kind === 'resumed')).toHaveLength(2);
      }
      expect(during.view().original?.content).toBe('pong during');
      const after = si.sendCommand({ guildId: guild!.id, name: 'after' });
      expect((await after.firstResponse()).data).toMatchObject({ content: 'pong after' });
      // Heartbeats flow on the resumed connection (HELLO asked for one every 400 ms).
      await vi.waitFor(() => expect(c.ws.shards.get(0)!.ping).toBeGreaterThanOrEqual(0), { timeout: 2000 });
      expect(failures).toEqual([]);
    });
  }

  it('lets discord.js retry an interaction callback after an injected 429', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const c = newClient(si);
    const failures = onInteraction(c, async (i) => {
      if (i.isChatInputCommand()) await i.reply({ content: 'after the rate limit' });
    });
    await ready(c, si.token);
    si.injectRestFault({
      method: 'POST',
      path: /^\/interactions\/\d+\/[^/]+\/callback$/,
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 0.3, global: false },
      headers: {
        'retry-after': '0.3',
        'x-ratelimit-limit': '1',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': ((Date.now() + 300) / 1000).toFixed(3),
        'x-ratelimit-reset-after': '0.300',
        'x-ratelimit-bucket': 'interaction-callback',
        'x-ratelimit-scope': 'shared',
      },
    });
    const started = performance.now();
    const handle = si.sendCommand({ guildId: guild!.id, name: 'limited' });
    const response = await handle.firstResponse();
    expect(response.data).toMatchObject({ content: 'after the rate limit' });
    const statuses = handle.requests().map((r) => r.status);
    expect(statuses).toEqual([429, 204]);
    const [limited, retried] = handle.requests();
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(300);
    expect(response.at - started).toBeLessThan(3000);
    expect(failures).toEqual([]);
  });

  it('delivers DM commands on shard 0 and parses multipart replies (payload_json + files)', async () => {
    const si = await start({ guilds: makeGuilds(3), shards: 2 });
    const c = newClient(si, { shards: 'auto' });
    const failures = onInteraction(c, async (i) => {
      if (!i.isChatInputCommand()) return;
      expect(i.inGuild()).toBe(false);
      expect(i.user.username).toBe('bob');
      await i.reply({
        content: 'export attached',
        files: [{ attachment: Buffer.from('id,name\n1,example\n'), name: 'export.csv' }],
        flags: MessageFlags.Ephemeral,
      });
    });
    await ready(c, si.token);
    const handle = si.sendCommand({ name: 'export', user: { id: '300000000000000002', username: 'bob' } });
    expect(handle.shardId).toBe(0);
    const response = await handle.firstResponse();
    expect(response.data).toMatchObject({ content: 'export attached', flags: 64 });
    const [callback] = handle.requests();
    expect(String(callback!.headers['content-type'])).toMatch(/^multipart\/form-data/);
    expect(callback!.files).toEqual([
      {
        field: 'files[0]',
        filename: 'export.csv',
        contentType: expect.any(String),
        size: 18,
        data: Buffer.from('id,name\n1,example\n'),
      },
    ]);
    expect(handle.view().original).toMatchObject({ content: 'export attached', flags: 64, deleted: false });
    expect(failures).toEqual([]);
  });

  it('holds READY for a delayed shard and drops interactions for shards without a session', async () => {
    const guilds = makeGuilds(8);
    const si = await start({ guilds, shards: 2 });
    si.setIdentifyDelay(1, 400);
    const c = newClient(si, { shards: 'auto' });
    const loggedIn = ready(c, si.token);
    await si.waitForShards(1, 2000);
    expect(si.connectedShards()).toEqual([0]);
    const onShard1 = guilds.find((g) => shardForGuild(g.id, 2) === 1)!;
    expect(si.sendCommand({ guildId: onShard1.id, name: 'early' }).delivery).toBe('dropped');
    await loggedIn;
    expect(si.connectedShards()).toEqual([0, 1]);
    expect(c.guilds.cache.size).toBe(8);
  });

  it('rejects REST waits and API errors the way discord.js surfaces them', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const c = newClient(si);
    await ready(c, si.token);
    const error = await c.channels.fetch('123456789012345678').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ code: 10003, status: 404 });
    const channel = await c.channels.fetch(guild!.channels[0]!.id, { force: true });
    expect(channel?.id).toBe(guild!.channels[0]!.id);
    await expect(si.waitForRequest((r) => r.path === '/nothing', 50)).rejects.toThrow(/Timed out/);
  });

  it('forgets finished interactions: records, messages and requests go, the others stay', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const [done, kept] = si.sendCommands([
      { guildId: guild!.id, name: 'up' },
      { guildId: guild!.id, name: 'up' },
    ]);
    const send = (method: string, path: string, body: unknown) =>
      fetch(`${si.restUrl}/v10${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const post = (path: string, body: unknown) => send('POST', path, body);
    const editOriginal = (token: string, content: string) =>
      send('PATCH', `/webhooks/${si.applicationId}/${token}/messages/@original`, { content });
    for (const h of [done!, kept!]) {
      expect((await post(`/interactions/${h.id}/${h.token}/callback`, { type: 5 })).status).toBe(204);
    }
    const other = await fetch(`${si.restUrl}/v10/gateway`);
    expect(other.status).toBe(200);
    expect(si.requests).toHaveLength(3);

    si.forget([done!.id, 'not-an-interaction']);
    // Only the forgotten interaction's request left the list (the same array, compacted).
    expect(si.requests.map((r) => r.path)).toEqual([
      `/interactions/${kept!.id}/${kept!.token}/callback`,
      '/gateway',
    ]);
    // Discord no longer knows it: its webhook and a new callback are refused; the other still works.
    expect((await editOriginal(done!.token, 'late')).status).toBe(404);
    const again = await post(`/interactions/${done!.id}/${done!.token}/callback`, { type: 5 });
    expect(await again.json()).toEqual({ message: 'Unknown interaction', code: 10062 });
    expect((await editOriginal(kept!.token, 'ok')).status).toBe(200);
    expect(kept!.view().original?.content).toBe('ok');
  });

  it('reads a request target as a URL would: queries, percent escapes and dot segments', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    // Raw HTTP/1.1, so the targets arrive as written (a client library would normalize them first).
    const raw = async (target: string): Promise<string> => {
      const socket = connect(Number(new URL(si.restUrl).port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        `GET ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bot ${si.token}\r\nconnection: close\r\n\r\n`,
      );
      let text = '';
      for await (const chunk of socket) text += String(chunk);
      return text.slice(0, text.indexOf('\r\n'));
    };
    expect(await raw(`/api/v10/guilds/${guild!.id}?with_counts=true`)).toBe('HTTP/1.1 200 OK');
    expect(await raw(`/api/v10/users/../guilds/${guild!.id}`)).toBe('HTTP/1.1 200 OK');
    expect(await raw('/api/v10/users/%31%32')).toBe('HTTP/1.1 404 Not Found');
    expect(await raw('/api/v10/./gateway?')).toBe('HTTP/1.1 200 OK');
    expect(await raw('/api/v10/gateway?v=1#frag')).toBe('HTTP/1.1 200 OK');
    expect(si.requests.map((r) => [r.path, r.query])).toEqual([
      [`/guilds/${guild!.id}`, 'with_counts=true'],
      [`/guilds/${guild!.id}`, ''],
      ['/users/12', ''],
      ['/gateway', ''],
      ['/gateway', 'v=1'],
    ]);
  });

  it('counts the connections opened to REST, used or not, and not the gateway', async () => {
    const [guild] = makeGuilds(1);
    const si = await start({ guilds: [guild!] });
    const c = newClient(si);
    // One shard on the gateway: not a REST connection.
    await ready(c, si.token);
    const afterLogin = si.restConnections();
    expect(afterLogin).toBeGreaterThan(0);
    const agent = new Agent({ connections: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await request(`${si.restUrl}/v10/gateway`, { dispatcher: agent });
        await response.body.dump();
      }
      // Three requests, one kept-alive connection.
      expect(si.restConnections()).toBe(afterLogin + 1);
      // A connection on which nothing is ever sent still counts.
      const socket = connect(Number(new URL(si.restUrl).port), '127.0.0.1');
      await once(socket, 'connect');
      // Connected on this side before the server has run its accept: give it up to a second.
      for (let i = 0; i < 100 && si.restConnections() < afterLogin + 2; i++) await sleep(10);
      expect(si.restConnections()).toBe(afterLogin + 2);
      socket.destroy();
    } finally {
      await agent.close();
    }
  });
});

/**
 * OpenTelemetry traces (issue 26), from the built bot (`node dist/src/app/main.js`) to a local
 * OTLP/HTTP receiver on 127.0.0.1: an /up is one trace (the interaction, its store statements, its
 * directory request with the rate limiter's wait, its answer to Discord); the reminder that /up
 * scheduled is posted in a trace of its own linked to it; log lines carry the trace and span ids;
 * no token, key or interaction token is in any span. With tracing off nothing is sent and no line
 * has a trace id.
 */
import { describe, expect, it, type onTestFinished } from 'vitest';
import { openStore, SettingsRepository, WebhookRepository } from '../../src/store/index.js';
import { snowflake, startDiscordStandIn } from '../discord/index.js';
import { IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp.js';
import { tempDir } from '../support/temp.js';
import { BotProcess, discordLikeToken, eventually, guildSet, leaksIn, startedReady } from './helpers.js';

const COOLDOWN_MS = 2_500;
const HOOK_KEY = 'tracing-hook-key-5678';
const SERVER_KIND = 2;

async function world(finished: typeof onTestFinished) {
  const receiver = await new OtlpReceiver().start();
  const emu = await startEmulator({ rateLimits: false, cooldownMs: COOLDOWN_MS });
  const set = guildSet(3, [{ id: IDS.serverFresh, memberCount: 321 }]);
  const discord = await startDiscordStandIn({ shards: 1, guilds: set.guilds, token: discordLikeToken() });
  const data = tempDir('ops-tracing');
  const guild = set.guilds.find((g) => g.id === IDS.serverFresh);
  const channelId = guild?.channels.find((c) => c.type === 0)?.id;
  if (!channelId) throw new Error('the stand-in guild has no text channel');
  // Reminders on in a channel: the /up schedules one, due COOLDOWN_MS later.
  // And the directory's webhook set up, announcing in the same channel.
  const store = await openStore({ dataDir: data.path });
  await new SettingsRepository(store).update(IDS.serverFresh, { reminderChannelId: channelId }, Date.now());
  await new WebhookRepository(store).configure(IDS.serverFresh, HOOK_KEY, channelId, Date.now());
  await store.close();
  const children: BotProcess[] = [];
  finished(async () => {
    await Promise.all(children.map((c) => c.destroy()));
    await discord.close();
    await emu.close();
    await receiver.close();
    data.remove();
  });
  const spawn = (env: Record<string, string>) => {
    const bot = new BotProcess('main.js', {
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.restUrl,
      DIRECTORY_API_URL: emu.url,
      DIRECTORY_API_VERSION: 'v2',
      DIRECTORY_TOKEN: TOKENS.serviceBot,
      DATA_DIR: data.path,
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      STATS_FIRST_DELAY: '60s',
      ...env,
    });
    children.push(bot);
    return bot;
  };
  return { receiver, emu, discord, channelId, spawn };
}

const someone = () => ({ id: snowflake(), username: `tracer_${Math.random().toString(36).slice(2, 8)}` });

function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  const below = spans.filter((s) => s.parentSpanId === parent.spanId);
  return [...below, ...below.flatMap((s) => childrenOf(spans, s))];
}

describe('traces', () => {
  it('an /up is one trace; its reminder a trace linked to it; ids in the log lines; no secret in a span', async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const bot = w.spawn({
      OTEL_EXPORTER_OTLP_ENDPOINT: w.receiver.url,
      OTEL_SERVICE_NAME: 'directory-bot-test',
      // Sent every 200 ms instead of every 5 s: the test waits less.
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // A port of its own choosing (a port found free here may be taken by another test file's
      // process by the time the bot listens): the directory is told the one it took.
      WEBHOOK_PORT: '0',
      WEBHOOK_HOST: '127.0.0.1',
    });
    await startedReady(bot);
    const listening = await bot.waitForEntry(
      (e) => e.msg === 'webhook receiver listening',
      10_000,
      'the webhook receiver',
    );
    w.emu.webhooks.set(IDS.serverFresh, {
      url: `http://127.0.0.1:${String(listening.port)}/hooks/directory/${IDS.serverFresh}`,
      key: HOOK_KEY,
    });
    const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
    await up.waitFor((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original'), 15_000);

    const root = await eventually(
      () =>
        w.receiver.spans.find(
          (s) => s.name === 'interaction command up' && s.attributes['discord.interaction.id'] === up.id,
        ),
      10_000,
      "the /up's span",
    );
    expect(root.kind).toBe(SERVER_KIND);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes).toMatchObject({
      'discord.interaction.kind': 'command',
      'discord.interaction.name': 'up',
      'discord.guild.id': IDS.serverFresh,
      'discord.interaction.outcome': 'success',
    });
    expect(root.resource).toMatchObject({ 'service.name': 'directory-bot-test' });
    // Everything the /up did, as spans of its trace, under its root.
    const inside = await eventually(
      () => {
        const found = childrenOf(w.receiver.spans, root);
        return found.some((s) => s.name.startsWith('discord PATCH')) ? found : undefined;
      },
      10_000,
      "the /up's answer to Discord as a span",
    );
    const names = inside.map((s) => s.name);
    expect(names).toContain('directory postServer');
    expect(names).toContain('directory rate-limit wait');
    expect(names.some((n) => /^store (select|insert|update|delete)$/.test(n))).toBe(true);
    expect(names).toContain('discord PATCH /webhooks/{id}/{token}/messages/@original');
    expect(inside.every((s) => s.traceId === root.traceId)).toBe(true);
    const post = inside.find((s) => s.name === 'directory postServer');
    expect(post?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/server',
      'http.response.status_code': 200,
    });
    // The limiter's wait is a span of the request's own.
    const wait = inside.find((s) => s.name === 'directory rate-limit wait');
    expect(wait?.parentSpanId).toBe(post?.spanId);

    // The reminder, COOLDOWN_MS later: posted in a trace of its own, linked to the /up's.
    await w.discord.waitForMessage(w.channelId, () => true, 15_000);
    const reminder = await eventually(
      () => w.receiver.spans.find((s) => s.name === 'reminder sent'),
      10_000,
      "the reminder's span",
    );
    expect(reminder.traceId).not.toBe(root.traceId);
    expect(reminder.parentSpanId).toBeUndefined();
    expect(reminder.links.map((l) => l.traceId)).toEqual([root.traceId]);
    expect(reminder.attributes).toMatchObject({ 'outbox.outcome': 'sent' });
    const reminderSpans = childrenOf(w.receiver.spans, reminder).map((s) => s.name);
    expect(reminderSpans).toContain('discord POST /channels/{id}/messages');

    // A delivery of the directory's webhook is a trace; its announcement one linked to it.
    expect(
      await w.emu.webhooks.comment(IDS.serverFresh, 'new', { user: '310000000000000001', new: 'traced' }),
    ).toBe(200);
    const announced = await eventually(
      () => w.receiver.spans.find((s) => s.name === 'webhook event announced'),
      15_000,
      "the announcement's span",
    );
    const delivery = w.receiver.spans.find(
      (s) => s.name === 'webhook delivery' && s.attributes['webhook.outcome'] === 'stored',
    );
    expect(delivery?.kind).toBe(SERVER_KIND);
    expect(announced.links.map((l) => l.traceId)).toEqual([delivery?.traceId]);

    // The /up's log lines carry its trace.
    const handled = bot.entries().find((e) => e.msg === 'interaction handled' && e.name === 'up');
    expect(handled?.trace_id).toBe(root.traceId);
    expect(typeof handled?.span_id).toBe('string');

    // No secret in anything sent to the receiver: tokens, the interaction's token, raw paths.
    await bot.stop();
    const sent = w.receiver.bodies.join('\n');
    expect(
      leaksIn([{ where: 'OTLP', text: sent }], [w.discord.token, TOKENS.serviceBot, up.token, HOOK_KEY]),
    ).toEqual([]);
    expect(sent).not.toMatch(/\/webhooks\/\d+\/[A-Za-z0-9._-]{20,}/);
    for (const s of w.receiver.spans) {
      for (const value of Object.values(s.attributes)) expect(String(value)).not.toContain(up.token);
    }
  }, 90_000);

  it('off unless configured: an endpoint with OTEL_TRACES_EXPORTER=none sends nothing, no line has a trace id', async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const bot = w.spawn({
      OTEL_EXPORTER_OTLP_ENDPOINT: w.receiver.url,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    await startedReady(bot);
    const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
    await up.waitFor((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original'), 15_000);
    await bot.stop();
    expect(w.receiver.bodies).toEqual([]);
    expect(bot.entries().filter((e) => 'trace_id' in e)).toEqual([]);
    expect(bot.entries().some((e) => e.msg === 'interaction handled')).toBe(true);
  }, 60_000);
});

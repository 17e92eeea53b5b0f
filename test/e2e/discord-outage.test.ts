/**
 * Discord having a bad hour, as an operator reads it (issue 39, item 3), scaled from minutes to
 * seconds: its REST answering 500 to every channel post, then a global 429 with a long
 * retry_after, each while three servers' reminders fall due. The reminders are late but each is
 * posted once; the log tells each trouble in one warning when it begins and one line when it is
 * over (not one per retry, not nothing), and the metric shows the state meanwhile. An interaction
 * answer Discord fails is tried again within its token's 15 minutes: late, not lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.js';
import { ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { makeGuild, type PostedMessage } from '../discord/index.js';
import { eventually } from '../support/wait.js';
import { embedOf, type Harness, LEVEL, type LogEntry, optionString, startHarness } from './harness.js';

const guilds = Array.from({ length: 3 }, (_, i) => makeGuild({ name: `Outage ${i}`, channels: ['bumps'] }));
const channelOf = (g: (typeof guilds)[number]): string => g.channels[0]!.id;
const CHANNEL_POSTS = /^\/channels\/\d+\/messages$/;

describe('Discord having a bad hour: one line per state change', () => {
  let h: Harness;
  let settings: SettingsRepository;
  let reminders: ReminderRepository;

  beforeAll(async () => {
    h = await startHarness({ guilds, metrics: (logger) => createMetrics({ logger, defaultMetrics: false }) });
    settings = new SettingsRepository(h.bot.store);
    reminders = new ReminderRepository(h.bot.store);
    for (const g of guilds) await settings.update(g.id, { reminderChannelId: channelOf(g) }, Date.now());
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  /** Each server's reminder due `inMs` from now, the scheduler told as an /up would tell it. */
  async function allDue(inMs: number): Promise<number> {
    const dueAt = Date.now() + inMs;
    for (const g of guilds) await reminders.scheduleGuild(g.id, { dueAt, nextUpAt: dueAt }, Date.now());
    h.bot.reminders.wake(dueAt);
    return dueAt;
  }

  /** The reminders each server's channel got since `t`: exactly one each, or throws. */
  async function postedOnceEach(t: number): Promise<PostedMessage[]> {
    const since = (m: PostedMessage) => m.receivedAt >= t;
    const posted = await Promise.all(
      guilds.map((g) => h.discord.waitForMessage(channelOf(g), since, 30_000)),
    );
    // Anything sent twice would have had time to land by the time every reminder is recorded.
    for (const g of guilds) {
      await eventually(
        async () => ((await reminders.getGuild(g.id))?.state === 'sent' ? true : undefined),
        10_000,
        'the reminder recorded as sent',
      );
    }
    for (const g of guilds) expect(h.discord.channelMessages(channelOf(g)).filter(since)).toHaveLength(1);
    return posted;
  }

  async function state(): Promise<Record<string, number>> {
    const text = await h.metrics!.registry.getSingleMetricAsString('discord_rest_state');
    const out: Record<string, number> = {};
    for (const [, name, value] of text.matchAll(/^discord_rest_state\{state="(\w+)"\} (\d+)$/gm)) {
      out[name!] = Number(value);
    }
    return out;
  }

  /** The bot's lines at warn or above from index `from` on. */
  const warnings = (from: number): LogEntry[] =>
    h
      .entries()
      .slice(from)
      .filter((e) => e.level >= LEVEL.warn);
  const lines = (from: number, msg: RegExp): LogEntry[] =>
    h
      .entries()
      .slice(from)
      .filter((e) => msg.test(String(e.msg)));
  /** The first line matching `msg` written at index `from` or later. */
  const lineAfter = (from: number, msg: RegExp, what: string): Promise<LogEntry> =>
    eventually(() => lines(from, msg)[0], 15_000, what);

  it('5xx on every channel post for 5 s: each reminder posted once after, one warning, one recovery line', async () => {
    const from = h.entries().length;
    h.discord.injectRestFault({ method: 'POST', path: CHANNEL_POSTS, status: 500, times: Infinity });
    const faultAt = Date.now();
    const dueAt = await allDue(300);
    // The warning comes with the first post whose retries are all spent, and the metric with it.
    await lineAfter(from, /^Discord failing/, 'the failing line');
    expect(await state()).toMatchObject({ ok: 0, failing: 1, rate_limited: 0 });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, faultAt + 5_000 - Date.now())));
    h.discord.clearRestFaults();
    const clearedAt = Date.now();

    const posted = await postedOnceEach(dueAt - 300);
    for (const m of posted) expect(m.receivedAt).toBeGreaterThanOrEqual(clearedAt);
    await lineAfter(from, /^Discord recovered/, 'the recovery line');
    // Lines that would follow late (another retry, a second recovery) have a moment to show up.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const failing = lines(from, /^Discord failing/);
    const recovered = lines(from, /^Discord recovered/);
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({
      level: LEVEL.warn,
      discordRest: 'failing',
      route: 'POST /channels/:id/messages',
    });
    expect(String(failing[0]!.msg)).toContain('500');
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ level: LEVEL.info, discordRest: 'ok', was: 'failing' });
    expect(recovered[0]!.failedRequests).toBeGreaterThanOrEqual(3);
    expect(recovered[0]!.lastedMs).toBeGreaterThanOrEqual(3_000);
    // Nothing else at warn or above: not one line per retry per reminder.
    expect(warnings(from)).toEqual(failing);
    expect(await state()).toMatchObject({ ok: 1, failing: 0, rate_limited: 0 });
    const changes = await h.metrics!.registry.getSingleMetricAsString('discord_rest_state_changes_total');
    expect(changes).toMatch(/^discord_rest_state_changes_total\{state="failing"\} 1$/m);
  }, 60_000);

  it('a global 429 with retry_after 3 s: one warning naming the hold and its length, one recovery line, each reminder posted once after', async () => {
    const from = h.entries().length;
    for (const g of guilds)
      h.discord.failPosts(channelOf(g), { status: 429, global: true, retryAfter: 3, times: 1 });
    const dueAt = await allDue(300);
    const held = await lineAfter(from, /^Discord rate-limited/, 'the rate-limited line');
    const heldAt = Date.now();
    expect(await state()).toMatchObject({ ok: 0, rate_limited: 1 });

    const posted = await postedOnceEach(dueAt - 300);
    // Held for the whole retry_after (less the time the warning took to be read here).
    for (const m of posted) expect(m.receivedAt).toBeGreaterThanOrEqual(heldAt + 2_000);
    await lineAfter(from, /^Discord recovered/, 'the recovery line');
    await new Promise((resolve) => setTimeout(resolve, 500));

    const limited = lines(from, /^Discord rate-limited/);
    const recovered = lines(from, /^Discord recovered/);
    expect(limited).toEqual([held]);
    expect(held).toMatchObject({ level: LEVEL.warn, discordRest: 'rate-limited', scope: 'global' });
    expect(held.retryAfterMs).toBeGreaterThanOrEqual(3_000);
    expect(String(held.msg)).toContain('global hold of 3.0 s');
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ level: LEVEL.info, discordRest: 'ok', was: 'rate-limited' });
    expect(recovered[0]!.lastedMs).toBeGreaterThanOrEqual(3_000);
    expect(warnings(from)).toEqual(limited);
    expect(await state()).toMatchObject({ ok: 1, failing: 0, rate_limited: 0 });
  }, 60_000);

  it('500 on every interaction answer for 6 s: the look-up is answered once after, within its token', async () => {
    const from = h.entries().length;
    const ANSWERS = /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/;
    h.discord.injectRestFault({ method: 'PATCH', path: ANSWERS, status: 500, times: Infinity });
    const sentAt = Date.now();
    const pending = h.send(
      { guildId: guilds[0]!.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
      60_000,
    );
    // Failed at least once (every retry of @discordjs/rest spent) before Discord answers again.
    await h.discord.waitForRequest((r) => r.method === 'PATCH' && ANSWERS.test(r.path), 10_000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, sentAt + 6_000 - Date.now())));
    h.discord.clearRestFaults();
    const clearedAt = performance.now();
    const answer = await pending.done;
    expect(answer.outcome).toBe('shown');
    // The edits before Discord answered again got 500; then exactly one landed.
    const edits = answer.requests.filter((r) => r.method === 'PATCH');
    const landed = edits.filter((r) => r.status !== 500);
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({ status: 200 });
    expect(landed[0]!.at).toBeGreaterThanOrEqual(clearedAt);
    expect(edits.length - landed.length).toBeGreaterThanOrEqual(4);
    expect(embedOf(answer.view.original!).title).toBe('Bot kerdoku');
    // Late by the outage and one backoff step at most, far within the token's 15 minutes.
    expect(landed[0]!.at - clearedAt).toBeLessThan(10_000);
    expect(
      h
        .entries()
        .slice(from)
        .filter((e) => e.msg === 'command failed'),
    ).toEqual([]);
  }, 60_000);
});

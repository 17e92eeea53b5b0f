/**
 * A reminder is posted once across `kill -9`, on SQLite and on PostgreSQL: the built bot is killed
 * while Discord holds its post, the post then goes through (Discord got it before the crash), and
 * a new process takes the claim over and sends the reminder again with the same nonce: Discord
 * answers with the first message, so the channel has one. A reminder that fell due while no bot
 * ran goes out when one starts. And the bot killed right after an /up (while the directory raises
 * the server, or once the answer is shown) still reminds the server once, at the next-up time.
 */
import { describe, expect, it, type onTestFinished } from 'vitest';
import { FollowupRepository, ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { isFinalAnswer } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { freshGuild, newUserRef, type World } from '../faults/fixtures.js';
import { ENGINES } from '../store/places.js';
import { eventually, START_BOUND_MS, withTimeout } from '../support/wait.js';
import { killScope } from './kill-scope.js';

/**
 * The directory's cooldown: long enough for a bot to die and another to start before it ends, on a
 * loaded machine too (at 7 s a slow restart found the reminder already claimed when it looked).
 */
const COOLDOWN_MS = 12_000;

// The four kills of an engine run at once (each in a world of its own): most of their time is
// waiting for a cooldown or a claim to run out.
describe.each(ENGINES)('a reminder across kill -9 (%s)', (engine) => {
  /** A world of the test's own, closed with its processes when the test ends. */
  function scope(finished: typeof onTestFinished) {
    const kill = killScope(engine, finished);
    return {
      /** A server with reminders on; a reminder due in `dueInMs` unless null (an /up will set it). */
      async setUp(dueInMs: number | null) {
        const { world, store } = await kill.open();
        const channelId = freshGuild.channels[0]!.id;
        const now = Date.now();
        await new SettingsRepository(store).update(freshGuild.id, { reminderChannelId: channelId }, now);
        const reminders = new ReminderRepository(store);
        if (dueInMs !== null) {
          await reminders.scheduleGuild(
            freshGuild.id,
            { dueAt: now + dueInMs, nextUpAt: now + dueInMs },
            now,
          );
        }
        return {
          world,
          channelId,
          reminders,
          followups: new FollowupRepository(store),
          settings: new SettingsRepository(store),
        };
      },
      start: kill.start,
    };
  }

  /** The directory's next-up time for the fresh server, once it has been raised. */
  function nextUpAt(w: World): number {
    const last = w.emu.state.ups.get(IDS.serverFresh);
    if (last === undefined) throw new Error('the server was not raised');
    return last + COOLDOWN_MS;
  }

  /** The reminder, due at the directory's next-up time (as the bot read it: within a second). */
  async function reminderAtNextUp(w: World, reminders: ReminderRepository): Promise<number> {
    const reminder = await eventually(() => reminders.getGuild(freshGuild.id), 5_000, 'the reminder');
    expect(reminder.state).toBe('scheduled');
    expect(Math.abs(reminder.dueAt - nextUpAt(w))).toBeLessThan(1_000);
    return reminder.dueAt;
  }

  /** One message in the channel at the next-up time (not before), and still one a moment later. */
  async function expectOneReminder(w: World, channelId: string, reminders: ReminderRepository, at: number) {
    const message = await w.discord.waitForMessage(channelId, undefined, 20_000);
    expect(message.receivedAt).toBeGreaterThanOrEqual(at);
    await eventually(
      async () => ((await reminders.getGuild(freshGuild.id))?.state === 'sent' ? true : undefined),
      5_000,
      'the reminder to be recorded as sent',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(w.discord.channelMessages(channelId)).toHaveLength(1);
  }

  it.concurrent('killed while the post is on its way: one message in the end', async ({ onTestFinished }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders } = await setUp(500);
    w.discord.holdPosts(channelId);
    const first = start('reminder-1', w);
    await first.ready();
    const held = await w.discord.waitForHeldPost(channelId, 10_000);
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the first bot to die');
    // Discord had the post: it creates the message although nobody reads the answer.
    await held.complete();
    await w.discord.releasePosts(channelId);
    expect(w.discord.channelMessages(channelId)).toHaveLength(1);
    expect((await reminders.getGuild(freshGuild.id))?.state).toBe('claimed');

    const second = start('reminder-2', w);
    await second.ready();
    const done = await eventually(
      async () => ((await reminders.getGuild(freshGuild.id))?.state === 'sent' ? true : undefined),
      15_000,
      'the second process to record the reminder',
    );
    expect(done).toBe(true);
    const messages = w.discord.channelMessages(channelId);
    expect(messages).toHaveLength(1);
    // The second post carried the same nonce and got the first message back.
    expect(messages[0]?.repeats).toBe(1);
  }, 120_000);

  it.concurrent('killed while the reminder after a heads-up is on its way: each post once, each replaced once', async ({
    onTestFinished,
  }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders, settings } = await setUp(null);
    const now = Date.now();
    // A heads-up 12 s before the up is possible (8 s from now: after the bot is up), then one repeat.
    await settings.update(
      freshGuild.id,
      { reminderEarlyMs: 12_000, reminderRepeat: { everyMs: 4_000, times: 1 } },
      now,
    );
    const nextUpAt = now + 20_000;
    await reminders.scheduleGuild(freshGuild.id, { dueAt: nextUpAt, nextUpAt }, now);
    const first = start('cycle-1', w);
    await first.ready();
    const headsUp = await w.discord.waitForMessage(channelId, undefined, 20_000);
    expect(headsUp.receivedAt).toBeLessThan(nextUpAt);
    w.discord.holdPosts(channelId);
    const held = await w.discord.waitForHeldPost(channelId, 30_000);
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the first bot to die');
    // Discord had the reminder's post; the heads-up is still there (it goes once the post is answered).
    await held.complete();
    await w.discord.releasePosts(channelId);
    expect(w.discord.liveMessages(channelId)).toHaveLength(2);

    const second = start('cycle-2', w);
    await second.ready();
    await eventually(
      async () => ((await reminders.getGuild(freshGuild.id))?.state === 'sent' ? true : undefined),
      30_000,
      'the repeat to be posted and the cycle recorded as over',
    );
    const [first1, reminder, repeat, ...more] = w.discord.channelMessages(channelId);
    expect(more).toEqual([]);
    expect(first1?.id).toBe(headsUp.id);
    // The reminder's second post carried the same nonce and got the first message back.
    expect(reminder?.repeats).toBe(1);
    expect(reminder?.receivedAt).toBeGreaterThanOrEqual(nextUpAt);
    expect(repeat?.receivedAt).toBeGreaterThanOrEqual(nextUpAt + 4_000);
    expect(repeat?.text).toContain('Repeat 1 of 1');
    expect(w.discord.liveMessages(channelId).map((m) => m.id)).toEqual([repeat?.id]);
  }, 120_000);

  it.concurrent("killed while the reminder's follow-up is tried again: the next process edits it once", async ({
    onTestFinished,
  }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders, followups } = await setUp(500);
    const first = start('followup-1', w);
    await first.ready();
    const posted = await w.discord.waitForMessage(channelId, undefined, 10_000);
    await eventually(
      async () => ((await reminders.getGuild(freshGuild.id))?.state === 'sent' ? true : undefined),
      5_000,
      'the reminder recorded as sent',
    );
    // Discord fails every edit for now: the follow-up is claimed, and left to be tried again.
    w.discord.injectRestFault({
      method: 'PATCH',
      path: /^\/channels\/\d+\/messages\/\d+$/,
      status: 500,
      times: Infinity,
    });
    const upper = newUserRef('upper');
    const up = w.discord.sendCommand({ guildId: freshGuild.id, name: 'up', user: upper });
    await up.waitFor(isFinalAnswer, 15_000);
    await eventually(
      async () => ((await followups.get(posted.id))?.state === 'claimed' ? true : undefined),
      10_000,
      'the follow-up claimed',
    );
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the first bot to die');
    // An edit the dead process had sent may still be in the stand-in's hands (its body read, its
    // answer not yet decided): it must meet the fault, as it would have at Discord, not the cleared
    // rules (then it lands, and the second process's edit is a second one).
    await w.discord.restSettled();
    w.discord.clearRestFaults();

    const second = start('followup-2', w);
    await second.ready();
    await eventually(
      async () => ((await followups.get(posted.id))?.state === 'done' ? true : undefined),
      15_000,
      'the second process to edit the reminder',
    );
    const [message] = w.discord.channelMessages(channelId);
    expect(w.discord.channelMessages(channelId)).toHaveLength(1);
    expect(message?.edits).toHaveLength(1);
    expect(JSON.stringify(message?.edits[0])).toContain(`<@${upper.id}>`);
  }, 120_000);

  it.concurrent('fell due while no bot ran: sent when one starts', async ({ onTestFinished }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders } = await setUp(-60_000);
    const started = Date.now();
    start('reminder-late', w);
    // Sent as soon as the process is up: a start-up wait.
    const message = await w.discord.waitForMessage(channelId, undefined, START_BOUND_MS);
    expect(message.receivedAt).toBeGreaterThanOrEqual(started);
    await eventually(
      async () => ((await reminders.getGuild(freshGuild.id))?.state === 'sent' ? true : undefined),
      5_000,
      'the reminder to be recorded',
    );
    expect(w.discord.channelMessages(channelId)).toHaveLength(1);
  }, 120_000);

  it.concurrent('killed while the directory raises the server: the next process sets the reminder and posts it once', async ({
    onTestFinished,
  }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders } = await setUp(null);
    w.emu.setCooldownMs(COOLDOWN_MS);
    // The directory raises the server at once but holds its answer: the bot dies before it learns
    // of the up, however late the kill comes on a busy machine. Only this user's up is held: a
    // report of the bot's own (a join, on a slow start) must not take the fault instead.
    const user = newUserRef('kill');
    w.emu.faults.add({
      kind: 'late-answer',
      ms: 60_000,
      method: 'POST',
      path: /^\/server$/,
      bodyIncludes: user.id,
      times: 1,
    });
    const first = start('up-1', w);
    await first.ready();
    const handle = w.discord.sendCommand({ guildId: freshGuild.id, name: 'up', user });
    await eventually(
      () =>
        w.emu.requests.find(
          (r) => r.method === 'POST' && r.path === '/v2/server' && r.body.includes(user.id),
        ),
      10_000,
      'the directory to receive the up',
    );
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the first bot to die');
    // Nothing in the store yet: the reminder comes from the directory's answer.
    expect(await reminders.getGuild(freshGuild.id)).toBeUndefined();

    // Its start is bounded apart (START_BOUND_MS, within ready()): on a machine running the whole
    // suite, starting a process took most of the 15 s the answer used to be given from here.
    const second = start('up-2', w);
    await second.ready();
    // The restarted bot sends the journaled up again; the directory says "not yet" until the
    // next-up time of the first up, which the reminder takes.
    await handle.waitFor(isFinalAnswer, 15_000);
    const at = await reminderAtNextUp(w, reminders);
    await expectOneReminder(w, channelId, reminders, at);
  }, 120_000);

  it.concurrent('killed right after the /up was answered: the reminder is in the store and the next process posts it once', async ({
    onTestFinished,
  }) => {
    const { setUp, start } = scope(onTestFinished);
    const { world: w, channelId, reminders } = await setUp(null);
    w.emu.setCooldownMs(COOLDOWN_MS);
    const first = start('answered-1', w);
    await first.ready();
    const handle = w.discord.sendCommand({
      guildId: freshGuild.id,
      name: 'up',
      user: newUserRef('answered'),
    });
    await handle.waitFor(isFinalAnswer, 10_000);
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the first bot to die');
    const at = await reminderAtNextUp(w, reminders);

    start('answered-2', w);
    await expectOneReminder(w, channelId, reminders, at);
  }, 120_000);
});

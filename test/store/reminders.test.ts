import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Claim,
  FollowupRepository,
  ReminderRepository,
  SettingsRepository,
  type Store,
} from '../../src/store/index.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const USER = '525366699969478676';
const guild = { kind: 'guild', guildId: GUILD } as const;
const personal = { kind: 'personal', guildId: GUILD, userId: USER } as const;
const HOUR = 3_600_000;
const T0 = 1_700_000_000_000;

describe.each(ENGINES)('reminders (%s)', (engine) => {
  let store: Store;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  let reminders: ReminderRepository;

  beforeEach(async () => {
    ({ store, another, done } = await freshStore(engine));
    reminders = new ReminderRepository(store);
  });
  afterEach(() => done());

  async function sentAt(dueAt: number): Promise<Claim> {
    await reminders.scheduleGuild(GUILD, { dueAt, nextUpAt: dueAt }, T0);
    const claim = await reminders.claim(guild, 'a', 60_000, dueAt);
    expect(claim).toBeDefined();
    expect(await reminders.markSent(claim!, dueAt + 1)).toBe(true);
    return claim!;
  }

  describe('the server reminder: the latest answer wins', () => {
    it('schedules a new one with its times', async () => {
      expect(await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + 2 * HOUR }, T0)).toBe(
        'scheduled',
      );
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        key: guild,
        dueAt: T0 + HOUR,
        nextUpAt: T0 + 2 * HOUR,
        state: 'scheduled',
        nonce: null,
        claimedBy: null,
      });
    });

    it('replaces the due time of one waiting', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0);
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + 3 * HOUR, nextUpAt: T0 + 3 * HOUR }, T0 + 1);
      expect((await reminders.getGuild(GUILD))?.dueAt).toBe(T0 + 3 * HOUR);
    });

    it('does not send again for a due time already sent', async () => {
      await sentAt(T0 + HOUR);
      expect(
        await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0 + HOUR + 5),
      ).toBe('unchanged');
      expect(await reminders.getGuild(GUILD)).toMatchObject({ state: 'sent', sentAt: T0 + HOUR + 1 });
    });

    it('schedules again after a sent one when the due time moves, with no trace of the last send', async () => {
      await sentAt(T0 + HOUR);
      expect(
        await reminders.scheduleGuild(GUILD, { dueAt: T0 + 5 * HOUR, nextUpAt: T0 + 5 * HOUR }, T0),
      ).toBe('scheduled');
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        state: 'scheduled',
        dueAt: T0 + 5 * HOUR,
        sentAt: null,
        nonce: null,
      });
    });

    it('leaves one being sent for the same due time alone, and tries a failed one again', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0);
      const claim = await reminders.claim(guild, 'a', 60_000, T0);
      expect(await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0 + 1)).toBe('unchanged');
      expect((await reminders.getGuild(GUILD))?.state).toBe('claimed');
      await reminders.markFailed(claim!, 'channel-deleted', T0 + 2);
      expect(await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0 + 3)).toBe('scheduled');
      expect(await reminders.getGuild(GUILD)).toMatchObject({ state: 'scheduled', failure: null });
    });
  });

  describe("a server reminder's heads-up and repeats", () => {
    const NEXT = T0 + 4 * HOUR;
    const EARLY = 10 * 60_000;
    let settings: SettingsRepository;
    beforeEach(() => {
      settings = new SettingsRepository(store);
    });

    it("is due the server's heads-up before the next-up time, through an /up and through the webhook", async () => {
      await settings.update(GUILD, { reminderEarlyMs: EARLY }, T0);
      await reminders.scheduleGuild(GUILD, { dueAt: NEXT, nextUpAt: NEXT, cooldownMs: 4 * HOUR }, T0);
      expect(await reminders.getGuild(GUILD)).toMatchObject({ dueAt: NEXT - EARLY, nextUpAt: NEXT });
      // An up elsewhere, an hour later: the next-up time moves, and the heads-up with it.
      expect(await reminders.moveForUp(GUILD, T0 + HOUR, 1_000, T0 + HOUR)).toBe(NEXT + HOUR - EARLY);
      // Another server, with no heads-up: due at its next-up time.
      await reminders.scheduleGuild('1', { dueAt: NEXT, nextUpAt: NEXT }, T0);
      expect((await reminders.getGuild('1'))?.dueAt).toBe(NEXT);
    });

    it('goes on after its heads-up with a new nonce, and an answer for the same next-up time keeps that', async () => {
      await settings.update(GUILD, { reminderEarlyMs: EARLY }, T0);
      await reminders.scheduleGuild(GUILD, { dueAt: NEXT, nextUpAt: NEXT }, T0);
      const headsUp = await reminders.claim(guild, 'a', 60_000, NEXT - EARLY);
      expect(headsUp?.cycle).toEqual({ nextUpAt: NEXT, step: 0, headsUpAt: null, post: null });
      await new FollowupRepository(store).recordPost(GUILD, {
        channelId: 'c',
        messageId: 'm1',
        text: 'soon',
        postedAt: NEXT,
      });
      expect(await reminders.markSent(headsUp!, NEXT - EARLY + 5, { at: NEXT, step: 0 })).toBe(true);
      expect(await reminders.getGuild(GUILD)).toMatchObject({ state: 'scheduled', dueAt: NEXT, nonce: null });
      // The bot's /up answered "not yet" with the same time: no second heads-up.
      expect(await reminders.scheduleGuild(GUILD, { dueAt: NEXT, nextUpAt: NEXT }, NEXT - 60_000)).toBe(
        'unchanged',
      );
      expect(await reminders.retime(GUILD, NEXT - 60_000)).toBeUndefined();
      expect(await reminders.claim(guild, 'b', 60_000, NEXT - 1)).toBeUndefined();
      const reminder = await reminders.claim(guild, 'b', 60_000, NEXT);
      expect(reminder?.nonce).not.toBe(headsUp?.nonce);
      expect(reminder?.cycle).toEqual({
        nextUpAt: NEXT,
        step: 0,
        headsUpAt: NEXT - EARLY + 5,
        post: { channelId: 'c', messageId: 'm1', postedAt: NEXT },
      });
      // Then its first repeat; the claim of the holder only.
      expect(await reminders.markSent(headsUp!, NEXT, { at: NEXT + HOUR, step: 1 })).toBe(false);
      expect(await reminders.markSent(reminder!, NEXT + 1, { at: NEXT + HOUR, step: 1 })).toBe(true);
      const repeat = await reminders.claim(guild, 'c', 60_000, NEXT + HOUR);
      expect(repeat?.cycle?.step).toBe(1);
      expect(await reminders.markSent(repeat!, NEXT + HOUR)).toBe(true);
      expect((await reminders.getGuild(GUILD))?.state).toBe('sent');
      // An up: a new cycle, its heads-up to come.
      await reminders.scheduleGuild(
        GUILD,
        { dueAt: NEXT + 5 * HOUR, nextUpAt: NEXT + 5 * HOUR },
        NEXT + HOUR,
      );
      const next = await reminders.claim(guild, 'd', 60_000, NEXT + 5 * HOUR - EARLY);
      expect(next?.cycle).toMatchObject({ nextUpAt: NEXT + 5 * HOUR, step: 0, headsUpAt: null });
    });

    it('takes a heads-up set, changed or turned off while it waits, not once it was posted', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: NEXT, nextUpAt: NEXT }, T0);
      await settings.update(GUILD, { reminderEarlyMs: EARLY }, T0);
      expect(await reminders.retime(GUILD, T0)).toBe(NEXT - EARLY);
      await settings.update(GUILD, { reminderEarlyMs: null }, T0);
      expect(await reminders.retime(GUILD, T0)).toBe(NEXT);
      await settings.update(GUILD, { reminderEarlyMs: 2 * EARLY }, T0);
      expect(await reminders.retime(GUILD, T0)).toBe(NEXT - 2 * EARLY);
      const claim = await reminders.claim(guild, 'a', 60_000, NEXT - 2 * EARLY);
      // Being posted: left alone.
      expect(await reminders.retime(GUILD, T0)).toBeUndefined();
      await reminders.markSent(claim!, NEXT - 2 * EARLY, { at: NEXT, step: 0 });
      await settings.update(GUILD, { reminderEarlyMs: EARLY }, T0);
      expect(await reminders.retime(GUILD, T0)).toBeUndefined();
      expect((await reminders.getGuild(GUILD))?.dueAt).toBe(NEXT);
    });
  });

  describe('claims', () => {
    it('claims only what is due', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0);
      expect(await reminders.claim(guild, 'a', 60_000, T0 + HOUR - 1)).toBeUndefined();
      const claim = await reminders.claim(guild, 'a', 60_000, T0 + HOUR);
      expect(claim).toMatchObject({ key: guild, by: 'a', dueAt: T0 + HOUR, expiresAt: T0 + HOUR + 60_000 });
      expect(claim?.nonce).toMatch(/^[\w-]{1,25}$/);
    });

    it('gives a running claim to nobody else, and an expired one to the next with the same nonce', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0);
      const first = await reminders.claim(guild, 'a', 60_000, T0);
      expect(await reminders.claim(guild, 'b', 60_000, T0 + 59_999)).toBeUndefined();
      const second = await reminders.claim(guild, 'b', 60_000, T0 + 60_000);
      expect(second).toMatchObject({ by: 'b', nonce: first?.nonce, expiresAt: T0 + 120_000 });
      // The first process comes back late: its claim is no longer its own.
      expect(await reminders.markSent(first!, T0 + 60_001)).toBe(false);
      expect(await reminders.markSent(second!, T0 + 60_002)).toBe(true);
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        state: 'sent',
        sentAt: T0 + 60_002,
        claimedBy: null,
      });
    });

    it('a retry time set by the holder lets the claim run out then, to anyone, with the same nonce', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0);
      const first = await reminders.claim(guild, 'a', 60_000, T0);
      // Only the holder sets it.
      expect(await reminders.retryAt({ ...first!, by: 'b' }, T0 + 2_000)).toBe(false);
      expect(await reminders.retryAt(first!, T0 + 2_000)).toBe(true);
      expect(await reminders.claim(guild, 'b', 60_000, T0 + 1_999)).toBeUndefined();
      const second = await reminders.claim(guild, 'b', 60_000, T0 + 2_000);
      expect(second).toMatchObject({ by: 'b', nonce: first?.nonce });
      expect(await reminders.retryAt(first!, T0 + 3_000)).toBe(false);
    });

    it('draws a new nonce for each due time', async () => {
      await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0);
      const first = await reminders.claim(guild, 'a', 60_000, T0);
      await reminders.markSent(first!, T0);
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0);
      const next = await reminders.claim(guild, 'a', 60_000, T0 + HOUR);
      expect(next?.nonce).toBeDefined();
      expect(next?.nonce).not.toBe(first?.nonce);
    });

    it('claims nothing sent, failed, rescheduled or cancelled', async () => {
      await sentAt(T0);
      expect(await reminders.claim(guild, 'b', 60_000, T0 + HOUR)).toBeUndefined();

      await reminders.scheduleGuild(GUILD, { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0);
      const claim = await reminders.claim(guild, 'a', 60_000, T0 + HOUR);
      expect(await reminders.markFailed(claim!, 'role-deleted', T0 + HOUR)).toBe(true);
      expect(await reminders.getGuild(GUILD)).toMatchObject({ state: 'failed', failure: 'role-deleted' });
      expect(await reminders.claim(guild, 'b', 60_000, T0 + 2 * HOUR)).toBeUndefined();

      // Rescheduled while being sent: the old claim cannot mark the new due time sent.
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + 2 * HOUR, nextUpAt: T0 + 2 * HOUR }, T0);
      const old = await reminders.claim(guild, 'a', 60_000, T0 + 2 * HOUR);
      await reminders.scheduleGuild(GUILD, { dueAt: T0 + 9 * HOUR, nextUpAt: T0 + 9 * HOUR }, T0 + 2 * HOUR);
      expect(await reminders.markSent(old!, T0 + 2 * HOUR)).toBe(false);
      expect((await reminders.getGuild(GUILD))?.state).toBe('scheduled');

      await reminders.cancel(guild);
      expect(await reminders.claim(guild, 'a', 60_000, T0 + 10 * HOUR)).toBeUndefined();
    });

    it('has exactly one winner when two connections race for each of 40 reminders', async () => {
      const other = new ReminderRepository(await another());
      const guilds = Array.from({ length: 40 }, (_, i) => String(700000000000000000n + BigInt(i)));
      for (const id of guilds) await reminders.scheduleGuild(id, { dueAt: T0, nextUpAt: T0 }, T0);
      const results = await Promise.all(
        guilds.flatMap((id) => [
          reminders.claim({ kind: 'guild', guildId: id }, 'a', 60_000, T0),
          other.claim({ kind: 'guild', guildId: id }, 'b', 60_000, T0),
        ]),
      );
      for (let i = 0; i < guilds.length; i++) {
        const pair = results.slice(2 * i, 2 * i + 2).filter((c) => c !== undefined);
        expect(pair).toHaveLength(1);
      }
      // And the same race for expired claims being taken over.
      const takeovers = await Promise.all(
        guilds.flatMap((id) => [
          reminders.claim({ kind: 'guild', guildId: id }, 'c', 60_000, T0 + 60_000),
          other.claim({ kind: 'guild', guildId: id }, 'd', 60_000, T0 + 60_000),
        ]),
      );
      for (let i = 0; i < guilds.length; i++) {
        const pair = takeovers.slice(2 * i, 2 * i + 2).filter((c) => c !== undefined);
        expect(pair).toHaveLength(1);
        expect(pair[0]?.nonce).toBe(results.slice(2 * i, 2 * i + 2).find((c) => c)?.nonce);
      }
    });
  });

  describe('personal reminders', () => {
    it('toggles on and off, and on again after one was sent', async () => {
      expect(await reminders.togglePersonal(GUILD, USER, T0 + HOUR, T0)).toBe('on');
      expect(await reminders.getPersonal(GUILD, USER)).toMatchObject({ key: personal, dueAt: T0 + HOUR });
      expect(await reminders.togglePersonal(GUILD, USER, T0 + HOUR, T0)).toBe('off');
      expect(await reminders.getPersonal(GUILD, USER)).toBeUndefined();

      expect(await reminders.togglePersonal(GUILD, USER, T0 + HOUR, T0)).toBe('on');
      const claim = await reminders.claim(personal, 'a', 60_000, T0 + HOUR);
      expect(await reminders.markSent(claim!, T0 + HOUR)).toBe(true);
      expect(await reminders.togglePersonal(GUILD, USER, T0 + 5 * HOUR, T0 + 2 * HOUR)).toBe('on');
      expect(await reminders.getPersonal(GUILD, USER)).toMatchObject({
        state: 'scheduled',
        dueAt: T0 + 5 * HOUR,
        nonce: null,
      });
    });

    it('ends on or off, never in an error, when toggled twice at once', async () => {
      const other = new ReminderRepository(await another());
      for (let round = 0; round < 10; round++) {
        const before = await reminders.getPersonal(GUILD, USER);
        const answers = await Promise.all([
          reminders.togglePersonal(GUILD, USER, T0, T0),
          other.togglePersonal(GUILD, USER, T0, T0),
        ]);
        // Two toggles: one turned it on and one off, so it is as it was.
        expect(answers.sort()).toEqual(['off', 'on']);
        expect((await reminders.getPersonal(GUILD, USER)) === undefined).toBe(before === undefined);
      }
    });

    it('keeps each member of each server apart', async () => {
      await reminders.togglePersonal(GUILD, USER, T0, T0);
      await reminders.togglePersonal(GUILD, '2', T0, T0);
      await reminders.togglePersonal('3', USER, T0, T0);
      await reminders.togglePersonal(GUILD, USER, T0, T0);
      expect(await reminders.getPersonal(GUILD, USER)).toBeUndefined();
      expect(await reminders.getPersonal(GUILD, '2')).toBeDefined();
      expect(await reminders.getPersonal('3', USER)).toBeDefined();
    });
  });

  it('lists what is due soon, of both kinds, earliest first, and not what is over', async () => {
    await reminders.scheduleGuild('1', { dueAt: T0 + 3 * HOUR, nextUpAt: T0 + 3 * HOUR }, T0);
    await reminders.scheduleGuild('2', { dueAt: T0 + HOUR, nextUpAt: T0 + HOUR }, T0);
    await reminders.scheduleGuild('3', { dueAt: T0 + 9 * HOUR, nextUpAt: T0 + 9 * HOUR }, T0);
    await reminders.togglePersonal('1', USER, T0 + 2 * HOUR, T0);
    await reminders.scheduleGuild('4', { dueAt: T0, nextUpAt: T0 }, T0);
    await reminders.markSent((await reminders.claim({ kind: 'guild', guildId: '4' }, 'a', 1, T0))!, T0);
    await reminders.scheduleGuild('5', { dueAt: T0, nextUpAt: T0 }, T0);
    await reminders.claim({ kind: 'guild', guildId: '5' }, 'a', 60_000, T0);

    const due = await reminders.dueSoon(T0 + 4 * HOUR, 10);
    expect(due.map((r) => [r.key, r.state])).toEqual([
      [{ kind: 'guild', guildId: '5' }, 'claimed'],
      [{ kind: 'guild', guildId: '2' }, 'scheduled'],
      [{ kind: 'personal', guildId: '1', userId: USER }, 'scheduled'],
      [{ kind: 'guild', guildId: '1' }, 'scheduled'],
    ]);
    expect(due[0]?.claimExpiresAt).toBe(T0 + 60_000);
    expect((await reminders.dueSoon(T0 + 4 * HOUR, 2)).map((r) => r.key.guildId)).toEqual(['5', '2']);
  });
});

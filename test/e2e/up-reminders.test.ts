/**
 * /up and the reminders, end to end: an answer with a next-up time sets the server's reminder to
 * the directory's time and carries "Remind me"; the button turns the presser's own reminder on and
 * off, privately, in their language; a manager's /up tells of a problem the reminders met.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { makeGuild, Permission } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import {
  type Answer,
  buttonsOf,
  embedOf,
  type Harness,
  privateMessage,
  publicMessage,
  startHarness,
} from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'Fresh Guild' });
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [guild] });
});
afterAll(async () => {
  await h?.close();
});

function remindButton(answer: Answer, how: 'public' | 'private') {
  const message = how === 'public' ? publicMessage(answer) : privateMessage(answer);
  return { message, button: buttonsOf(message).find((b) => b.custom_id?.startsWith('remind:')) };
}

describe('/up and the reminders', () => {
  it('a success sets the server reminder to the next-up time and offers "Remind me"; "not yet" too', async () => {
    const reminders = new ReminderRepository(h.bot.store);
    const first = await h.run({ guildId: guild.id, name: 'up' });
    expect(first.outcome).toBe('success');
    const { button } = remindButton(first, 'public');
    expect(button?.label).toBe('Remind me');
    const nextUp = Number(button?.custom_id?.split(':')[1]) * 1000;
    expect(nextUp).toBeGreaterThan(Date.now());
    await expect
      .poll(async () => Math.ceil(((await reminders.getGuild(guild.id))?.dueAt ?? 0) / 1000) * 1000, {
        timeout: 3_000,
      })
      .toBe(nextUp);

    const again = await h.run({ guildId: guild.id, name: 'up', locale: 'ru' });
    expect(again.outcome).toBe('cooldown');
    expect(remindButton(again, 'private').button?.label).toBe('Напомнить мне');
  });

  it('the button turns the presser’s own reminder on, then off, answered privately in their language', async () => {
    const reminders = new ReminderRepository(h.bot.store);
    const answer = await h.run({ guildId: guild.id, name: 'up' });
    const { message, button } = remindButton(answer, 'private');
    const user = { id: '525366699969478676', username: 'presser' };
    const on = await h.click({
      guildId: guild.id,
      customId: button!.custom_id!,
      messageId: message.id,
      user,
    });
    expect(on.outcome).toBe('on');
    expect(embedOf(privateMessage(on)).description).toContain('I will DM you');
    expect((await reminders.getPersonal(guild.id, user.id))?.state).toBe('scheduled');
    const off = await h.click({ guildId: guild.id, customId: button!.custom_id!, user, locale: 'ru' });
    expect(off.outcome).toBe('off');
    expect(embedOf(privateMessage(off)).description).toBe('Ваше напоминание отменено.');
    expect(await reminders.getPersonal(guild.id, user.id)).toBeUndefined();
  });

  it('a press after the time sets nothing; a forged id is expired', async () => {
    const past = await h.click({ guildId: guild.id, customId: 'remind:1600000000' });
    expect(past.outcome).toBe('past');
    expect(embedOf(privateMessage(past)).description).toContain('can already be raised again');
    const forged = await h.click({ guildId: guild.id, customId: 'remind:../../x' });
    expect(forged.outcome).toBe('expired');
  });

  it('tells a manager, and only a manager, about a problem the reminders met', async () => {
    const settings = new SettingsRepository(h.bot.store);
    await settings.update(
      guild.id,
      { reminderChannelId: guild.channels[0]!.id, problem: 'channel-deleted' },
      Date.now(),
    );
    const notice = (a: Answer) =>
      a.view.followUps
        .filter((m) => !m.deleted)
        .some((m) => JSON.stringify(m.embeds).includes('/settings show'));
    const manager = await h.run({
      guildId: guild.id,
      name: 'up',
      permissions: Permission.ManageGuild | Permission.UseApplicationCommands,
    });
    await expect.poll(() => notice(manager), { timeout: 3_000 }).toBe(true);
    const member = await h.run({
      guildId: guild.id,
      name: 'up',
      permissions: Permission.UseApplicationCommands,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(notice(member)).toBe(false);
  });
});

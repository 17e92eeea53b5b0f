/**
 * What the store keeps about a server goes with the bot: its settings and reminders are deleted
 * when the bot is removed from it, not when the server is only unavailable for a while; a store
 * that cannot delete them is one warn line naming the server, and the bot goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { makeGuild, snowflake } from '../discord/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, LEVEL, optionString, startHarness } from './harness.js';

const left = makeGuild({ name: 'Left Guild' });
const staying = makeGuild({ name: 'Staying Guild' });
const flaky = makeGuild({ name: 'Flaky Guild' });
const control = makeGuild({ name: 'Control Guild' });
const MEMBER = snowflake();
const DELETED = "deleted the left guild's settings and reminders";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [left, staying, flaky, control] });
});
afterAll(async () => {
  await h?.close();
});

/** A server's settings, its next-up reminder and a member's own reminder, as commands will make them. */
async function remember(guildId: string): Promise<void> {
  const now = Date.now();
  await new SettingsRepository(h.bot.store).update(guildId, { reminderChannelId: snowflake() }, now);
  const reminders = new ReminderRepository(h.bot.store);
  await reminders.scheduleGuild(guildId, { dueAt: now + 60_000, nextUpAt: now + 60_000 }, now);
  await reminders.togglePersonal(guildId, MEMBER, now + 60_000, now);
}

/** Which of them the store still has. */
async function kept(guildId: string): Promise<string[]> {
  const reminders = new ReminderRepository(h.bot.store);
  const found = [
    (await new SettingsRepository(h.bot.store).get(guildId)) && 'settings',
    (await reminders.getGuild(guildId)) && 'reminder',
    (await reminders.getPersonal(guildId, MEMBER)) && 'personal reminder',
  ];
  return found.filter((what): what is string => typeof what === 'string');
}

const ALL = ['settings', 'reminder', 'personal reminder'];

describe("a server's data when the bot leaves it", () => {
  it('is deleted when the bot is removed from the server, and only that server’s', async () => {
    await remember(left.id);
    await remember(staying.id);
    h.discord.removeGuild(left.id);
    await h.waitForLog((e) => e.msg === DELETED && e.guildId === left.id);
    expect(await kept(left.id)).toEqual([]);
    expect(await kept(staying.id)).toEqual(ALL);
  });

  it('is kept through an outage of the server', async () => {
    await remember(flaky.id);
    h.discord.removeGuild(flaky.id, true);
    h.discord.addGuild(flaky);
    // A real leave after them on the same shard: once it is handled, so are they.
    h.discord.removeGuild(staying.id);
    await h.waitForLog((e) => e.msg === DELETED && e.guildId === staying.id);
    expect(await kept(flaky.id)).toEqual(ALL);
    expect(h.entries().some((e) => e.msg === DELETED && e.guildId === flaky.id)).toBe(false);
  });

  it('a store that cannot delete it: one warn line naming the server, and the bot goes on', async () => {
    // Closed under the bot: every query fails from now on.
    await h.bot.store.close();
    h.discord.removeGuild(flaky.id);
    const line = await h.waitForLog(
      (e) => e.msg === "could not delete the left guild's settings and reminders" && e.guildId === flaky.id,
    );
    expect(line.level).toBe(LEVEL.warn);
    const answer = await h.run({
      guildId: control.id,
      name: 'bot',
      options: [optionString('ref', 'kerdoku')],
    });
    expect(answer.outcome).toBe('shown');
  });
});

itLeavesNoTrace(() => h);

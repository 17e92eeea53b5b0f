/**
 * How many of the project's files an /up and a webhook delivery cross (issue 38: a newcomer
 * follows one through the code, and every file on the way is one more to open). Measured with
 * V8's precise coverage of this process, reset just before the action and read just after it: a
 * file counts when any of its functions ran meanwhile. What runs on the gateway's thread (the
 * deferral, sent from the packet) is another isolate and not counted; what a background task
 * happened to run in the same window would be, so the window is only the action itself.
 *
 * The bounds are the counts measured when this test was written, so that the path can only get
 * shorter without someone saying why; the lists are printed for whoever wants to walk them.
 */
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PermissionFlagsBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandOption, makeGuild, makeTextChannel } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { eventually } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'crossings-webhook-key-0123456789abcdef';
/**
 * Measured with this test on its first day: 74 and 40 files (main thread only), with a few files
 * of room for what a background task (the guild statistics' refresh, a task's wake) may run in the
 * same window. A change that makes either path longer than this says why, here.
 */
const UP_FILES_AT_MOST = 80;
const DELIVERY_FILES_AT_MOST = 45;

const events = makeTextChannel({ name: 'directory-events' });
const reminders = makeTextChannel({ name: 'reminders', position: 1 });
const guild = makeGuild({ id: IDS.serverFresh, name: 'Crossings', channels: [events, reminders] });

let h: Harness;
const session = new Session();

beforeAll(async () => {
  h = await startHarness({
    guilds: [guild],
    emulator: { cooldownMs: 0 },
    env: { WEBHOOK_PORT: '0', WEBHOOK_HOST: '127.0.0.1', PUBLIC_URL: 'https://bot.example.test/' },
  });
  for (const [sub, options] of [
    ['webhook', [commandOption.string('key', KEY), commandOption.channel('channel', events.id)]],
    ['reminders', [commandOption.channel('channel', reminders.id)]],
  ] as const) {
    const answer = await h.run({
      guildId: guild.id,
      name: 'settings',
      options: [commandOption.subcommand(sub, [...options])],
      permissions: PermissionFlagsBits.ManageGuild,
    });
    expect(answer.outcome).toMatch(/-on$/);
  }
  // Each once before the count: what a running bot has loaded and compiled already.
  expect((await h.run({ guildId: guild.id, name: 'up' })).outcome).toBe('success');
  await comment();
  // The directory tells no webhook of the counted /up: its delivery is counted apart.
  h.emu.webhooks.set(guild.id, null);
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
}, 60_000);

afterAll(async () => {
  await session.post('Profiler.stopPreciseCoverage').catch(() => undefined);
  session.disconnect();
  await h?.close();
});

/** A comment delivered by the directory (the emulator), once announced in the events channel. */
async function comment(): Promise<void> {
  const before = h.discord.channelMessages(events.id).length;
  const url = `http://127.0.0.1:${h.bot.webhookPort()}/hooks/directory/${guild.id}`;
  h.emu.webhooks.set(guild.id, { url, key: KEY });
  const at = Date.now();
  expect(await h.emu.webhooks.comment(guild.id, 'new', { user: IDS.serviceBot, at, new: 'Nice' })).toBe(200);
  h.emu.webhooks.set(guild.id, null);
  await eventually(
    () => (h.discord.channelMessages(events.id).length > before ? true : undefined),
    10_000,
    'the comment announced',
  );
}

/** The project's files (src/, commands/) any of whose functions ran during `action`. */
async function crossed(action: () => Promise<void>): Promise<string[]> {
  await session.post('Profiler.takePreciseCoverage');
  await action();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = relative(ROOT, fileURLToPath(script.url));
    if (!/^(src|commands)\//.test(file)) continue;
    if (script.functions.some((f) => f.ranges.some((r) => r.count > 0))) files.add(file);
  }
  return [...files].sort();
}

describe('the files an /up and a webhook delivery cross', () => {
  it('an /up', async () => {
    const files = await crossed(async () => {
      expect((await h.run({ guildId: guild.id, name: 'up' })).outcome).toBe('success');
    });
    console.log(`crossings: an /up crosses ${files.length} files\n  ${files.join('\n  ')}`);
    expect(files.length).toBeGreaterThan(10);
    expect(files.length).toBeLessThanOrEqual(UP_FILES_AT_MOST);
  });

  it('a webhook delivery', async () => {
    const files = await crossed(comment);
    console.log(`crossings: a webhook delivery crosses ${files.length} files\n  ${files.join('\n  ')}`);
    expect(files.length).toBeGreaterThan(5);
    expect(files.length).toBeLessThanOrEqual(DELIVERY_FILES_AT_MOST);
  });
});

/**
 * An up the directory tells of over its v3 notifications (issue 37) is acted on once across
 * `kill -9`, on SQLite and on PostgreSQL. The built bot (v3, the staff key: its account owns the
 * server) is connected to the emulator's gateway; a member ups the server on the site; the bot
 * stores the up_added, records the up, queues the member's reward role, moves the reminder, and
 * posts the server's thank-you line, and is killed while Discord holds that post (Discord then
 * creates it: it had the post). Started again on the same store, the bot takes the event's claim
 * over: in the end the up is in the history once, the channel has one thank-you line, the member
 * has the role (recorded once; Discord may be asked twice, see below), and the reminder waits
 * for the directory's next up (24 h on v3). The directory then sends the same event again (a
 * replay, over the new connection): it is a duplicate, and nothing changes.
 *
 * Both cases of the post in flight: Discord had it (and creates the message: the second process's
 * post with the claim's nonce returns it), or it was lost with the process (the second process,
 * finding the up recorded under this event's own id, thanks: one line either way).
 */
import { describe, it } from 'vitest';
import { V3_UP_EVERY_MS } from '../../src/features/up/follows.js';
import { ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { RewardRepository } from '../../src/store/rewards.js';
import { botRoleOf, DEFAULT_BOT_PERMISSIONS, makeMember, makeUser, Permission } from '../discord/index.js';
import { type Emulator, IDS, V3_KEYS } from '../emulator/index.js';
import { freshGuild } from '../faults/fixtures.js';
import { httpGet, sample } from '../ops/helpers.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { eventually } from '../support/wait.js';
import { killScope } from './kill-scope.js';

const THANKS = 'Thanks {member} for the up!';

function keySockets(emu: Emulator) {
  return emu.v3.sockets().filter((s) => s.authed && s.key === V3_KEYS.staff);
}

describe('an up told by the v3 notifications across kill -9', () => {
  // The two engines at once (each in a world of its own): most of their time is start-up and waiting.
  it.concurrent.for([
    ['sqlite', 'complete'],
    ['postgres', 'drop'],
  ] as const)(
    'killed while Discord holds the thank-you line (%s; Discord: %s): the up is acted on once, and a replay changes nothing',
    { timeout: 60_000 },
    async ([engine, discordHad], { expect, onTestFinished, skip }) => {
      skip(engine === 'postgres' && !HAS_POSTGRES, 'no PostgreSQL in this run');
      const kill = killScope(engine, onTestFinished);
      const { world: w, store } = await kill.open();
      const guildId = freshGuild.id;
      expect(guildId).toBe(IDS.serverFresh);
      const channelId = freshGuild.channels[0]!.id;

      // The member who ups, and the role an up gives (the bot may give it).
      const g = w.discord.guilds.get(guildId)!;
      const member = makeUser({ username: 'upper' });
      g.members.push(makeMember(member));
      const reward = w.discord.addRole(guildId, { name: 'Upper', position: 2 });
      const botRole = botRoleOf(g, w.discord.botUser.id)!;
      w.discord.setRolePermissions(
        guildId,
        botRole.id,
        BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.ManageRoles,
      );
      botRole.position = reward.position + 1;

      const now = Date.now();
      await new SettingsRepository(store).update(
        guildId,
        { reminderChannelId: channelId, thanksTemplate: THANKS },
        now,
      );
      const rewards = new RewardRepository(store);
      await rewards.set({ guildId, roleId: reward.id, ups: 1, period: 'all' }, now);
      const reminders = new ReminderRepository(store);

      const env = {
        DIRECTORY_API_VERSION: 'v3',
        DIRECTORY_TOKEN_KIND: '',
        DIRECTORY_ROUTE_RATE_LIMIT: '',
        DIRECTORY_TOKEN: V3_KEYS.staff,
        DIRECTORY_NOTIFY_URL: w.emu.v3.notifyUrl,
        HTTP_PORT: '0',
      };
      const events = async () =>
        store.run((db) => db.selectFrom('webhook_events').select(['id', 'state']).execute());
      const history = async () =>
        store.run((db) =>
          db
            .selectFrom('up_history')
            .select(['id', 'user_id', 'source'])
            .where('guild_id', '=', guildId)
            .execute(),
        );
      const grantId = `${guildId}:${reward.id}:${member.id}:all:add`;
      const rolePut = new RegExp(`^/guilds/${guildId}/members/${member.id}/roles/${reward.id}$`);

      w.discord.holdPosts(channelId);
      const first = kill.start('notify-1', w, env);
      await first.ready();
      await eventually(
        () => (keySockets(w.emu).length === 1 ? true : undefined),
        15_000,
        'the bot to connect',
      );

      const at = Date.now();
      w.emu.v3.upOnSite(guildId, member.id, { at });
      const held = await w.discord.waitForHeldPost(channelId, 15_000);
      // Stored, recorded, and being acted on when the process dies.
      expect(await events()).toEqual([{ id: expect.stringContaining(`:v3:up_added:`), state: 'claimed' }]);
      await kill.killed(first);
      // Discord had the post (it creates the message although nobody reads the answer), or not.
      if (discordHad === 'complete') await held.complete();
      else await held.drop();
      await w.discord.releasePosts(channelId);
      expect(w.discord.channelMessages(channelId)).toHaveLength(discordHad === 'complete' ? 1 : 0);

      const secondAt = performance.now();
      const second = kill.start('notify-2', w, env);
      await second.ready();
      const port = await second.opsPort();
      await eventually(
        async () => ((await events())[0]?.state === 'done' ? true : undefined),
        20_000,
        'the second process to finish the event',
      );
      await eventually(
        async () => ((await rewards.get(grantId))?.state === 'done' ? true : undefined),
        20_000,
        'the role to be given',
      );

      // The directory sends the event again, over the second process's connection: a duplicate.
      await eventually(
        () => (keySockets(w.emu).length === 1 ? true : undefined),
        15_000,
        'the bot to reconnect',
      );
      w.emu.v3.replay(1);
      await eventually(
        async () => {
          const text = (await httpGet(port, '/metrics')).body;
          const duplicates = sample(text, 'directory_notifications_total', {
            type: 'up_added',
            via: 'notify',
            outcome: 'duplicate',
          });
          return duplicates === 1 ? true : undefined;
        },
        10_000,
        'the replayed event to be taken as a duplicate',
      );
      // Once: one event, one up in the history, one thank-you line, the role given once.
      const [event, ...moreEvents] = await events();
      expect(moreEvents).toEqual([]);
      expect(event?.state).toBe('done');
      expect(await history()).toEqual([{ id: `hook:${event?.id}`, user_id: member.id, source: 'notify' }]);
      const messages = w.discord.channelMessages(channelId);
      expect(messages).toHaveLength(1);
      expect(messages[0]?.text).toContain(`<@${member.id}>`);
      expect(messages[0]?.pings).toEqual({ everyone: false, users: [], roles: [] });
      expect(g.members.find((m) => m.user.id === member.id)?.roles).toContain(reward.id);
      // Given by one process, or by both when the first died between Discord's answer and its record
      // of it: a PUT of a role the member has changes nothing, and the grant is recorded once.
      const roleCalls = w.discord.requests.filter((r) => rolePut.test(r.path));
      expect(roleCalls.map((r) => `${r.method} ${r.status}`)).toContain('PUT 204');
      expect(roleCalls.filter((r) => r.at < secondAt).length).toBeLessThanOrEqual(1);
      expect(roleCalls.filter((r) => r.at >= secondAt).length).toBeLessThanOrEqual(1);
      expect(roleCalls.every((r) => r.method === 'PUT')).toBe(true);
      expect(await store.run((db) => db.selectFrom('reward_grants').select('id').execute())).toEqual([
        { id: grantId },
      ]);
      // The reminder waits for the directory's next possible up: a day after this one on v3.
      const reminder = await reminders.getGuild(guildId);
      expect(reminder?.state).toBe('scheduled');
      expect(reminder?.nextUpAt).toBe(at + V3_UP_EVERY_MS);
    },
  );
});

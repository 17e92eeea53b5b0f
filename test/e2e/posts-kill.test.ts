/**
 * A digest is posted once, and a reward role given once, across `kill -9`, on SQLite and on
 * PostgreSQL. The built bot is killed while Discord holds the digest's post (Discord then creates
 * it anyway): the next process takes the claim over and posts again with the same nonce, and
 * Discord answers with the first message. The bot is killed while Discord fails the role's grant
 * (5xx, tried again later): the next process gives it, and the grant is recorded once.
 */
import { describe, expect, it } from 'vitest';
import { digestPlan } from '../../src/features/digests/plan.js';
import { periodAt, previousPeriod } from '../../src/features/history/calendar.js';
import { DigestRepository } from '../../src/store/digests.js';
import { HistoryRepository, SettingsRepository } from '../../src/store/index.js';
import { RewardRepository } from '../../src/store/rewards.js';
import {
  botRoleOf,
  DEFAULT_BOT_PERMISSIONS,
  makeGuild,
  makeMember,
  makeRole,
  makeUser,
  Permission,
} from '../discord/index.js';
import { freshGuild } from '../faults/fixtures.js';
import { ENGINES } from '../store/places.js';
import { eventually } from '../support/wait.js';
import { killScope } from './kill-scope.js';

describe.each(ENGINES)('digests and reward roles across kill -9 (%s)', (engine) => {
  it.concurrent('killed while the digest is on its way: one message in the end', async ({
    onTestFinished,
  }) => {
    const { open, start, killed } = killScope(engine, onTestFinished);
    const { world: w, store } = await open();
    const channelId = freshGuild.channels[0]!.id;
    const now = Date.now();
    const last = previousPeriod(periodAt('week', now, 'UTC'));
    await new HistoryRepository(store).record({
      id: 'kill:1',
      guildId: freshGuild.id,
      userId: '525366699969478676',
      at: last.start + 3_600_000,
      upCount: null,
      source: 'bot',
    });
    await new SettingsRepository(store).update(freshGuild.id, { digest: { channelId, period: 'week' } }, now);
    const digests = new DigestRepository(store);
    const plan = digestPlan(freshGuild.id, { channelId, period: 'week' }, 'UTC', last.start);
    await digests.schedule({ ...plan, dueAt: now + 500 });
    w.discord.holdPosts(channelId);
    const first = start('digest-1', w);
    await first.ready();
    const held = await w.discord.waitForHeldPost(channelId, 15_000);
    await killed(first);
    // Discord had the post: it creates the message although nobody reads the answer.
    await held.complete();
    await w.discord.releasePosts(channelId);
    expect(w.discord.channelMessages(channelId)).toHaveLength(1);

    const second = start('digest-2', w);
    await second.ready();
    const id = `${freshGuild.id}:${plan.key}`;
    await eventually(
      async () =>
        (await digests.list(freshGuild.id)).find((d) => d.id === id)?.state === 'done' ? true : undefined,
      20_000,
      'the second process to record the digest',
    );
    const messages = w.discord.channelMessages(channelId);
    expect(messages).toHaveLength(1);
    // The second post carried the same nonce and got the first message back.
    expect(messages[0]?.repeats).toBe(1);
    // And this week's digest waits for its end.
    expect((await digests.list(freshGuild.id)).map((d) => d.state)).toEqual(['pending', 'done']);
  }, 120_000);

  it.concurrent('killed while Discord fails a reward role: the next process gives it, recorded once', async ({
    onTestFinished,
  }) => {
    const reward = makeRole({ name: 'Upper', position: 2 });
    const member = makeUser({ username: 'rewarded' });
    const guild = makeGuild({ name: 'Rewards', channels: ['bumps'], roles: [reward] });
    guild.members.push(makeMember(member));
    const { open, start, killed } = killScope(engine, onTestFinished);
    const { world: w, store } = await open({ guilds: [guild] });
    const g = w.discord.guilds.get(guild.id)!;
    const botRole = botRoleOf(g, w.discord.botUser.id)!;
    w.discord.setRolePermissions(
      guild.id,
      botRole.id,
      BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.ManageRoles,
    );
    botRole.position = reward.position + 1;
    const rewards = new RewardRepository(store);
    const now = Date.now();
    await rewards.set({ guildId: guild.id, roleId: reward.id, ups: 1, period: 'all' }, now);
    // The member reached the count (an up the bot recorded): the grant waits.
    await rewards.enqueue(
      [
        {
          guildId: guild.id,
          roleId: reward.id,
          userId: member.id,
          periodKey: 'all',
          action: 'add',
          dueAt: now,
        },
      ],
      now,
    );
    const id = `${guild.id}:${reward.id}:${member.id}:all:add`;
    const route = new RegExp(`^/guilds/${guild.id}/members/${member.id}/roles/${reward.id}$`);
    w.discord.injectRestFault({ method: 'PUT', path: route, status: 500, times: Number.POSITIVE_INFINITY });
    const first = start('reward-1', w);
    await first.ready();
    await eventually(
      async () => ((await rewards.get(id))?.state === 'claimed' ? true : undefined),
      15_000,
      'the grant claimed',
    );
    await eventually(
      () => w.discord.requests.find((r) => r.method === 'PUT' && route.test(r.path)),
      10_000,
      'a PUT',
    );
    await killed(first);
    w.discord.clearRestFaults();
    expect(g.members.find((m) => m.user.id === member.id)?.roles).not.toContain(reward.id);

    const second = start('reward-2', w);
    await second.ready();
    await eventually(
      async () => ((await rewards.get(id))?.state === 'done' ? true : undefined),
      20_000,
      'the second process to give the role',
    );
    expect(g.members.find((m) => m.user.id === member.id)?.roles).toContain(reward.id);
    const given = w.discord.requests.filter(
      (r) => r.method === 'PUT' && route.test(r.path) && r.status === 204,
    );
    expect(given).toHaveLength(1);
    expect(await store.run((db) => db.selectFrom('reward_grants').select('id').execute())).toEqual([{ id }]);
  }, 120_000);
});

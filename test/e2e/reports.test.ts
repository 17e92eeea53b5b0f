/**
 * Server reports: joining a guild is POST /server with up 0 and status 1, leaving it status 0
 * (both naming the guild's system channel), an outage (the guild becoming unavailable) and its
 * end send nothing, nor does a (re)start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGuild, makeTextChannel, makeUser } from '../discord/index.js';
import { IDS, type RecordedRequest, TOKENS } from '../emulator/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, startHarness } from './harness.js';

const ICON = '00112233445566778899aabbccddeeff';
const owner = makeUser({ id: '150000000000000002', username: 'joined_owner' });
const welcome = makeTextChannel({ name: 'welcome', position: 0 });
const joined = makeGuild({
  name: 'Joined Guild',
  icon: ICON,
  memberCount: 77,
  owner_id: owner.id,
  channels: [welcome, 'off-topic'],
});
const present = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const control = makeGuild({ name: 'Control Guild' });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [present, control], users: [owner] });
});
afterAll(async () => {
  await h?.close();
});

async function waitForPosts(n: number, timeoutMs = 5_000): Promise<RecordedRequest[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const posts = h.emu.requests.filter((r) => r.method === 'POST' && r.path === '/v2/server');
    if (posts.length >= n && posts.slice(0, n).every((r) => r.status !== 0)) return posts;
    if (Date.now() > deadline) throw new Error(`expected ${n} POST /server, got ${posts.length}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function bodyOf(request: RecordedRequest | undefined): Record<string, unknown> {
  return JSON.parse(request?.body ?? '{}') as Record<string, unknown>;
}

describe('server reports', () => {
  it('a join posts up 0, status 1 and its data; the guilds of the start are not reported', async () => {
    h.discord.addGuild(joined);
    const posts = await waitForPosts(1);
    expect(posts).toHaveLength(1);
    expect(posts[0]?.headers.authorization).toBe(`Bot ${TOKENS.serviceBot}`);
    expect(bodyOf(posts[0])).toMatchObject({
      serverID: joined.id,
      up: 0,
      status: 1,
      serverName: 'Joined Guild',
      serverAvatar: `https://cdn.discordapp.com/icons/${joined.id}/${ICON}.webp?size=512`,
      serverMembersAllCount: 77,
      serverOwnerID: owner.id,
      upUserID: h.discord.botUser.id,
      upChannelID: welcome.id,
      upChannelName: 'welcome',
    });
    expect(posts[0]?.status).toBe(200);
    expect(h.emu.state.botsOnServers.get(joined.id)?.has(IDS.serviceBot)).toBe(true);
    const sent = await h.waitForLog((e) => e.msg === 'server report sent' && e.guildId === joined.id);
    expect(sent).toMatchObject({ botPresent: true });
  });

  it('leaving a guild posts up 0, status 0, naming the channel the join named', async () => {
    h.emu.reset();
    h.discord.removeGuild(joined.id);
    const posts = await waitForPosts(1);
    const body = bodyOf(posts[0]);
    // discord.js has dropped the guild's channels when it tells of the leave: the bot remembered it.
    expect(body).toMatchObject({
      serverID: joined.id,
      up: 0,
      status: 0,
      serverName: 'Joined Guild',
      upUserID: h.discord.botUser.id,
      upChannelID: welcome.id,
      upChannelName: 'welcome',
    });
    expect(posts[0]?.status).toBe(200);
  });

  it('a leave right after a join is the last word: the join report is dropped, not sent after it', async () => {
    h.emu.reset();
    const brief = makeGuild({ name: 'Brief Guild', owner_id: owner.id, channels: ['general'] });
    // The join's statistics are still being gathered (GET guild, held 1 s; the join waits for it
    // at most 300 ms) when the leave arrives, however the two dispatches are read on a busy machine.
    h.discord.injectRestFault({ method: 'GET', path: new RegExp(`^/guilds/${brief.id}`), delayMs: 1_000 });
    h.discord.addGuild(brief);
    h.discord.removeGuild(brief.id);
    const posts = await waitForPosts(1);
    // Long enough for the join's statistics (answered at once by the stand-in) and its report.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const forBrief = h.emu.requests.filter((r) => r.method === 'POST' && bodyOf(r).serverID === brief.id);
    expect(forBrief.map((r) => bodyOf(r).status)).toEqual([0]);
    expect(bodyOf(posts[0])).toMatchObject({ serverID: brief.id, status: 0, upChannelName: 'general' });
    expect(h.emu.state.botsOnServers.get(brief.id)?.has(IDS.serviceBot) ?? false).toBe(false);
    const dropped = 'join report dropped: the guild was left meanwhile';
    expect(h.entries().some((e) => e.msg === dropped && e.guildId === brief.id)).toBe(true);
  });

  it('an outage and its end send nothing', async () => {
    h.emu.reset();
    h.discord.removeGuild(present.id, true);
    h.discord.addGuild(present);
    // A real leave after them on the same shard: had the outage been reported, it would come first.
    h.discord.removeGuild(control.id);
    const posts = await waitForPosts(1);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(h.emu.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(bodyOf(posts[0])).toMatchObject({ serverID: control.id, status: 0, up: 0 });
    expect(h.entries().some((e) => e.guildId === present.id && e.msg === 'left a guild')).toBe(false);
  });
});

itLeavesNoTrace(() => h, { sendsMessages: false });

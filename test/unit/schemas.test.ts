import { describe, expect, it } from 'vitest';
import { normalizeNextUp } from '../../src/directory/next-up.js';
import {
  botReferenceListSchema,
  botSchema,
  commentListSchema,
  linkListSchema,
  profileCommentsSchema,
  profileSchema,
  serverSchema,
  serverUpSchema,
} from '../../src/directory/schemas.js';
import { timestampToDate } from '../../src/time/range.js';
import { directorySample as sample } from '../support/samples.js';

describe('schemas against the published samples', () => {
  it('maps the real bot, keeping the support server the spec does not list', () => {
    const bot = botSchema.parse(sample('bot.json'));
    expect(bot).toMatchObject({
      id: '724663360934772797',
      shortCode: 'kerdoku',
      supportServer: { id: '724668798874943529', approved: true },
      bumps: 37,
      prefix: '?',
      library: 'discordpy',
      badge: null,
      status: 'APPROVED',
      stats: { servers: 2558, shards: 3, users: 348986 },
      links: { discord: '5qXgJvr', github: null, site: 'https://kerdoku.top' },
    });
    expect(bot.tags).toContain('экономика');
    expect(bot.pageLinks).toHaveLength(6);
  });

  it('maps the real server although it has no information.owner', () => {
    const server = serverSchema.parse(sample('server.json'));
    expect(server).toMatchObject({
      id: '722424773233213460',
      name: 'BotiCord Community',
      members: { all: 438, online: 0 },
      owner: null,
      bumps: 62,
      badge: 'STAFF',
      status: 'ACCEPT_MEMBERS',
      bot: { id: null, approved: false },
    });
    expect(server.links.invite).toBe('hkHjW8a');
  });

  it('maps the real profile', () => {
    expect(profileSchema.parse(sample('profile.json'))).toMatchObject({
      id: '178404926869733376',
      badge: 'STAFF',
      shortCode: 'cipherka',
      vk: null,
      git: 'https://git.sqdsh.top/me',
    });
  });

  it('reads comment times in seconds or ms, createdAt or updatedAt', () => {
    const [created, updated] = commentListSchema.parse(sample('bot-comments.json'));
    expect(created?.at?.toISOString()).toBe('2022-02-09T06:33:19.000Z');
    expect(created?.isUpdated).toBe(false);
    expect(updated?.isUpdated).toBe(true);
    expect(updated?.at?.getTime()).toBe(1650183132145);
    const profile = profileCommentsSchema.parse(sample('profile-comments.json'));
    expect(profile.bots).toHaveLength(1);
    expect(profile.servers).toHaveLength(1);
  });

  it('maps links and developer bots', () => {
    const links = linkListSchema.parse(sample('links.json'));
    expect(links.map((l) => l.domain)).toEqual(['bcord.cc', 'myservers.me']);
    expect(links[0]?.createdAt?.getTime()).toBe(1650181977858);
    expect(botReferenceListSchema.parse(sample('developer-bots.json'))).toEqual([
      { id: '672406367344132116', shortCode: 'sonata' },
    ]);
  });

  it('normalizes the epoch-style and the duration-style next up', () => {
    const epoch = serverUpSchema(1_641_000_000_000).parse(sample('server-up-response.json'));
    expect(epoch.nextUpAt?.toISOString()).toBe('2022-01-07T21:00:30.690Z');
    expect(epoch.timeToNextUpInMs).toBe(1641589230690);
    expect(epoch.upSuccessfully).toBe(true);
    const duration = serverUpSchema(1_700_000_000_000).parse(sample('server-up-cooldown-response.json'));
    expect(duration.nextUpAt?.getTime()).toBe(1_700_000_000_000 + 14_395_000);
    expect(duration.upSuccessfully).toBe(false);
    expect(duration.message).toContain('Сервер пока нельзя поднять');
  });

  it('tolerates loose values the wild sends: numeric badge, string counts, null short code, extra fields', () => {
    const raw = sample('bot.json') as { information: Record<string, unknown> } & Record<string, unknown>;
    raw.shortCode = null;
    raw.information.badge = 3;
    raw.information.bumps = '41';
    raw.somethingNew = { nested: true };
    const bot = botSchema.parse(raw);
    expect(bot.shortCode).toBeNull();
    expect(bot.badge).toBe('3');
    expect(bot.bumps).toBe(41);
  });

  it('rejects drift on what we rely on', () => {
    expect(botSchema.safeParse({ id: '1', information: { bumps: { value: 1 } } }).success).toBe(false);
    expect(serverSchema.safeParse({ id: '1', information: { title: 'renamed name' } }).success).toBe(false);
    expect(serverUpSchema(0).safeParse({ serverID: '1', up: 1 }).success).toBe(false);
    expect(commentListSchema.safeParse({ not: 'an array' }).success).toBe(false);
  });
});

describe('time normalization', () => {
  it('takes values above 1e12 as epoch ms and others as durations', () => {
    expect(normalizeNextUp(1_641_589_230_690, 5)?.getTime()).toBe(1_641_589_230_690);
    expect(normalizeNextUp(60_000, 1_000)?.getTime()).toBe(61_000);
    expect(normalizeNextUp(0, 1_000)?.getTime()).toBe(1_000);
    expect(normalizeNextUp(null, 1_000)).toBeNull();
    expect(normalizeNextUp(-5, 1_000)).toBeNull();
  });

  it('reads small timestamps as seconds', () => {
    expect(timestampToDate(1644388399)?.getTime()).toBe(1644388399000);
    expect(timestampToDate(1650181977858)?.getTime()).toBe(1650181977858);
    expect(timestampToDate(0)).toBeNull();
  });
});

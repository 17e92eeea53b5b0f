/**
 * Contract: every method and every status row of the spec, in v1 and v2, against the emulator
 * over a real socket.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryClient } from '../../src/directory/client.js';
import {
  BadRequestError,
  ForbiddenError,
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
} from '../../src/directory/errors.js';
import type { ApiVersion, TokenKind } from '../../src/directory/types.js';
import { type Emulator, IDS, PRIVATE_BOT_SERVERS, startEmulator, TOKENS } from '../emulator/index.js';
import { directorySampleText } from '../support/samples.js';
import { clientFor } from './helpers.js';

let emu: Emulator;
const clients: DirectoryClient[] = [];

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false, cooldownMs: 60_000 });
});
afterEach(async () => {
  emu.reset();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await emu.close();
});

function client(version: ApiVersion, token?: string, tokenKind: TokenKind = 'Bot'): DirectoryClient {
  const c = clientFor(emu, { version, token, tokenKind });
  clients.push(c);
  return c;
}

const upBody = (serverId: string) => ({
  serverId,
  up: true,
  botPresent: true,
  upUserId: '525366699969478676',
  upChannelId: '722424773233213461',
  upChannelName: 'general',
});

describe.each(['v1', 'v2'] as const)('%s', (version) => {
  const bot = () => client(version, TOKENS.serviceBot, 'Bot');
  const profile = () => client(version, TOKENS.profile, 'Profile');

  it('GET /bot by ID and by short code; 404 Bot not found', async () => {
    const byId = await client(version).getBot(IDS.plainBot);
    expect(byId).toMatchObject({ id: IDS.plainBot, shortCode: 'kerdoku', status: 'APPROVED' });
    expect((await client(version).getBot('kerdoku')).id).toBe(IDS.plainBot);
    const err = await client(version)
      .getBot('999999999999999999')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ message: 'Bot not found', status: 404, method: 'getBot' });
    // Public methods send no token at all.
    expect(emu.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('GET /bot/{id}/comments', async () => {
    const comments = await bot().getBotComments(IDS.botManyComments);
    expect(comments.length).toBeGreaterThan(10);
    expect(comments[0]).toHaveProperty('userId');
    expect(comments.every((c) => c.at === null || c.at instanceof Date)).toBe(true);
  });

  it('POST /stats stores the statistics', async () => {
    expect(await bot().postBotStats({ servers: 120, shards: 2, users: 5000 })).toEqual({ ok: true });
    const last = emu.requests.at(-1);
    expect(last?.method).toBe('POST');
    expect(JSON.parse(last?.body ?? '{}')).toEqual({ servers: 120, shards: 2, users: 5000 });
    expect((await client(version).getBot(IDS.serviceBot)).stats).toEqual({
      servers: 120,
      shards: 2,
      users: 5000,
    });
  });

  it('GET /server by ID and short code; 404 Server not found', async () => {
    const server = await client(version).getServer('boticord');
    expect(server).toMatchObject({ id: IDS.serverFresh, name: 'BotiCord Community', members: { all: 438 } });
    const err = await client(version)
      .getServer('999999999999999999')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('Server not found');
  });

  it('GET /server/{id}/comments', async () => {
    expect(Array.isArray(await bot().getServerComments(IDS.serverFresh))).toBe(true);
  });

  it('POST /server: up, then the cooldown, with the next up normalized', async () => {
    const before = Date.now();
    const first = await bot().postServer(upBody(IDS.serverFresh));
    expect(first).toMatchObject({
      serverId: IDS.serverFresh,
      updated: true,
      upSuccessfully: true,
      bumps: 63,
    });
    expect(first.message).toContain('UP');
    expect(first.nextUpAt!.getTime()).toBeGreaterThanOrEqual(before + 59_000);
    const second = await bot().postServer(upBody(IDS.serverFresh));
    expect(second).toMatchObject({ upSuccessfully: false, bumps: 63 });
    expect(Math.abs(second.nextUpAt!.getTime() - first.nextUpAt!.getTime())).toBeLessThan(1500);
    const sent = JSON.parse(emu.requests.at(-1)?.body ?? '{}');
    expect(sent).toEqual({
      serverID: IDS.serverFresh,
      up: 1,
      status: 1,
      upUserID: '525366699969478676',
      upChannelID: '722424773233213461',
      upChannelName: 'general',
    });
  });

  it('POST /server in duration style gives the same absolute time', async () => {
    emu.setNextUpStyle('duration');
    await bot().postServer(upBody(IDS.serverFresh));
    const cooldown = await bot().postServer(upBody(IDS.serverFresh));
    expect(cooldown.timeToNextUpInMs).toBeLessThanOrEqual(60_000);
    expect(cooldown.nextUpAt!.getTime()).toBeGreaterThan(Date.now() + 55_000);
    emu.setNextUpStyle('epoch');
  });

  it('POST /server with up 0 and the optional statistics; updated false is reported', async () => {
    const stats = await bot().postServer({
      ...upBody(IDS.serverFresh),
      up: false,
      botPresent: false,
      name: 'Renamed',
      membersAll: 500,
      membersOnline: 20,
      ownerId: '178404926869733376',
      ownerTag: 'owner',
    });
    expect(stats.upSuccessfully).toBe(false);
    expect(JSON.parse(emu.requests.at(-1)?.body ?? '{}')).toMatchObject({
      up: 0,
      status: 0,
      serverName: 'Renamed',
      serverMembersAllCount: 500,
      serverMembersOnlineCount: 20,
      serverOwnerID: '178404926869733376',
      serverOwnerTag: 'owner',
    });
    const notUpdated = await bot().postServer(upBody(IDS.serverNotUpdated));
    expect(notUpdated.updated).toBe(false);
    expect(notUpdated.message.length).toBeGreaterThan(0);
  });

  it('POST /server 401 with a wrong token or a bot that is not a service bot', async () => {
    for (const token of ['wrong-token-123', TOKENS.plainBot]) {
      const err = await client(version, token, 'Bot')
        .postServer(upBody(IDS.serverFresh))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect((err as Error).message).toBe('Unauthorized');
    }
  });

  it('GET /profile; 404 Profile not found', async () => {
    expect(await client(version).getProfile(IDS.profileUser)).toMatchObject({
      id: IDS.profileUser,
      shortCode: 'cipherka',
      badge: 'STAFF',
    });
    const err = await client(version)
      .getProfile('999999999999999999')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('Profile not found');
  });

  it('GET /profile/{id}/comments and GET /bots/{id}', async () => {
    const comments = await bot().getProfileComments(IDS.profileUser);
    expect(comments.bots.length + comments.servers.length).toBeGreaterThan(0);
    expect(await bot().getDeveloperBots(IDS.profileUser)).toEqual([
      { id: '672406367344132116', shortCode: 'sonata' },
    ]);
  });

  it('links: create, get (all and by code), delete; 400 and 404 rows', async () => {
    const p = profile();
    expect(await p.createLink({ code: 'contract1', link: 'https://example.org/a', domain: 3 })).toEqual({
      ok: true,
    });
    const dup = await p
      .createLink({ code: 'contract1', link: 'https://example.org/b', domain: 3 })
      .catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(BadRequestError);
    expect((dup as Error).message).toBe('Bad request');
    const mine = await p.getLinks({ code: 'contract1' });
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      code: 'contract1',
      domain: 'discord.camp',
      link: 'https://example.org/a',
    });
    expect((await p.getLinks()).length).toBeGreaterThanOrEqual(1);
    expect(await p.deleteLink({ code: 'contract1', domain: 3 })).toEqual({ ok: true });
    for (const call of [
      () => p.getLinks({ code: 'contract1' }),
      () => p.deleteLink({ code: 'contract1', domain: 3 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotFoundError);
      expect((err as Error).message).toBe('Link not found');
    }
  });

  it('validator 400 (the other shape) becomes BadRequest with its message', async () => {
    // The client never sends a body without upUserID; a drifted server can still answer so.
    const validator = directorySampleText('validator-400.json');
    emu.faults.add({ path: /^\/server$/, kind: 'text', status: 400, body: validator });
    const err = await bot()
      .postServer(upBody(IDS.serverFresh))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toBe("body must have required property 'upUserID'");
  });
});

describe('v2 only', () => {
  it('PrivateBot: permitted servers pass, others are 403 Forbidden', async () => {
    const c = client('v2', TOKENS.privateBot, 'PrivateBot');
    expect((await c.postServer(upBody(PRIVATE_BOT_SERVERS[1]!))).updated).toBe(true);
    const err = await c.postServer(upBody(IDS.serverFresh)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as Error).message).toBe('Forbidden');
  });

  it('validateBot and checkToken', async () => {
    const c = client('v2', TOKENS.serviceBot, 'Bot');
    expect(await c.validateBot(IDS.serverFresh, IDS.serviceBot)).toEqual({ ok: expect.any(Boolean) });
    await expect(c.validateBot('999999999999999999', IDS.serviceBot)).rejects.toBeInstanceOf(NotFoundError);
    expect(await c.checkToken()).toMatchObject({ ok: true, type: 'Bot' });
    const err = await client('v2', 'not-a-token', 'Bot')
      .checkToken()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
  });

  it('v1 has neither: refused before sending', async () => {
    const c = client('v1', TOKENS.serviceBot);
    await expect(c.validateBot(IDS.serverFresh, IDS.serviceBot)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.checkToken()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests).toHaveLength(0);
  });

  it('the v2 header carries the kind word, v1 the bare token', async () => {
    await client('v2', TOKENS.serviceBot, 'Bot').getBotComments(IDS.plainBot);
    await client('v1', TOKENS.serviceBot, 'Bot').getBotComments(IDS.plainBot);
    expect(emu.requests.map((r) => r.headers.authorization)).toEqual([
      `Bot ${TOKENS.serviceBot}`,
      TOKENS.serviceBot,
    ]);
  });
});

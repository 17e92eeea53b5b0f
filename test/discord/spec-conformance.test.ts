// The stand-in's check of every request against Discord's API description (spec/conformance.ts):
// it finds an undeclared field wherever it is, accepts what Discord accepts, answers the request
// all the same, and knows every route the stand-in serves.

import { describe, expect, it } from 'vitest';
import { botRoleOf, makeGuild, makeRole, Permission } from './index.js';
import {
  assertNoViolations,
  checkRequest,
  describeViolations,
  specOperations,
  specRoute,
} from './spec/conformance.js';
import { SPEC_ROUTES } from './spec/routes.js';
import { standInSession } from './test-session.js';

const CALLBACK = '/interactions/123456789012345678/a-token/callback';
const CALLBACK_ROUTE = '/interactions/{interaction_id}/{interaction_token}/callback';
const ORIGINAL = '/webhooks/123456789012345678/a-token/messages/@original';

/** A reply as the bot sends one: content, an embed, a button row, no pings. */
const reply = () => ({
  type: 4,
  data: {
    content: 'Raised',
    flags: 64,
    tts: false,
    embeds: [{ title: 'Server', color: 0x5865f2, fields: [{ name: 'Ups', value: '3', inline: true }] }],
    components: [{ type: 1, components: [{ type: 2, style: 1, label: 'Remind me', custom_id: 'remind:1' }] }],
    allowed_mentions: { parse: [], replied_user: false },
  },
});

const pointers = (method: string, path: string, body: unknown) =>
  checkRequest(method, path, body).map((v) => v.pointer);

describe("Discord's API description, as the stand-in checks requests against it", () => {
  it('accepts a well-formed interaction reply, deferral and follow-up', () => {
    expect(checkRequest('POST', CALLBACK, reply())).toEqual([]);
    expect(checkRequest('POST', CALLBACK, { type: 5, data: { flags: 64 } })).toEqual([]);
    expect(checkRequest('POST', CALLBACK, { type: 6 })).toEqual([]);
    expect(
      checkRequest('POST', '/webhooks/123456789012345678/a-token', { ...reply().data, flags: 64 }),
    ).toEqual([]);
    expect(checkRequest('GET', '/users/@me', undefined)).toEqual([]);
  });

  it("finds discord.js's camelCase repliedUser where the API declares replied_user", () => {
    const body = reply();
    body.data.allowed_mentions = { parse: [], repliedUser: false } as never;
    expect(checkRequest('POST', CALLBACK, body)).toEqual([
      {
        method: 'POST',
        route: CALLBACK_ROUTE,
        pointer: '/data/allowed_mentions/repliedUser',
        message: 'is not declared by the API',
      },
    ]);
    expect(pointers('PATCH', ORIGINAL, { content: '', allowed_mentions: { repliedUser: false } })).toEqual([
      '/allowed_mentions/repliedUser',
    ]);
  });

  it('finds a made-up field at the top, inside an embed and inside a component', () => {
    expect(pointers('POST', CALLBACK, { ...reply(), priority: 'high' })).toEqual(['/priority']);

    const inEmbed = reply();
    (inEmbed.data.embeds[0]!.fields[0] as Record<string, unknown>).bold = true;
    expect(pointers('POST', CALLBACK, inEmbed)).toEqual(['/data/embeds/0/fields/0/bold']);

    const inButton = reply();
    (inButton.data.components[0]!.components[0] as Record<string, unknown>).customId = 'remind:1';
    expect(pointers('POST', CALLBACK, inButton)).toEqual(['/data/components/0/components/0/customId']);

    expect(
      pointers('PUT', '/applications/123456789012345678/commands', [
        {
          name: 'up',
          description: 'Raise',
          options: [{ type: 3, name: 'ref', description: 'x', hint: 'y' }],
        },
      ]),
    ).toEqual(['/0/options/0/hint']);
  });

  it('takes an integer written as a digit string, as Discord does, and nothing else for one', () => {
    const command = (permissions: unknown) => [
      { name: 'settings', description: 'Settings', default_member_permissions: permissions },
    ];
    const path = '/applications/123456789012345678/commands';
    expect(checkRequest('PUT', path, command('32'))).toEqual([]);
    expect(checkRequest('PUT', path, command(32))).toEqual([]);
    expect(pointers('PUT', path, command('manage'))).toEqual(['/0/default_member_permissions']);
    expect(pointers('POST', CALLBACK, { type: 5, data: { flags: 'ephemeral' } })).toEqual(['/data/flags']);
  });

  it("lets discord.js's own tts / enforce_nonce false on an edit pass, and nothing more", () => {
    expect(checkRequest('PATCH', ORIGINAL, { content: 'x', tts: false, enforce_nonce: false })).toEqual([]);
    expect(pointers('PATCH', ORIGINAL, { content: 'x', tts: true })).toEqual(['/tts']);
  });

  it('flags a route the description does not have, and a body where the route takes none', () => {
    expect(checkRequest('POST', '/channels/1/typing', undefined)).toEqual([
      {
        method: 'POST',
        route: '/channels/1/typing',
        pointer: '',
        message: 'no such route in the API description',
      },
    ]);
    expect(checkRequest('GET', '/users/@me', { hello: 1 })).toEqual([
      { method: 'GET', route: '/users/@me', pointer: '', message: 'the route takes no request body' },
    ]);
  });

  it('describes violations one line each, with how many times they came, and fails a teardown on any', () => {
    const body = { type: 4, data: { content: 'x', allowed_mentions: { repliedUser: false } } };
    const twice = [...checkRequest('POST', CALLBACK, body), ...checkRequest('POST', CALLBACK, body)];
    expect(describeViolations(twice)).toBe(
      `POST ${CALLBACK_ROUTE} /data/allowed_mentions/repliedUser: is not declared by the API (x2)`,
    );
    // A teardown's check: silent on none, the lines in the error otherwise.
    expect(() => assertNoViolations([])).not.toThrow();
    expect(() => assertNoViolations(twice)).toThrow(/repliedUser: is not declared by the API \(x2\)/);
  });

  it('has exactly the routes the stand-in serves (routes.ts): the trimmed copy is up to date', () => {
    const key = (r: { method: string; route?: string; path?: string }) => `${r.method} ${r.route ?? r.path}`;
    expect(specOperations().map(key).sort()).toEqual(SPEC_ROUTES.map(key).sort());
  });
});

describe('the stand-in checks every request it receives', () => {
  const session = standInSession();

  it('answers a request with an undeclared field as Discord does, and records the violation', async () => {
    const guild = makeGuild({ channels: ['general'] });
    const si = await session.start({ guilds: [guild] });
    const handle = si.sendCommand({ name: 'up', guildId: guild.id });
    const base = `${si.restUrl}/v10`;
    const callback = await fetch(`${base}/interactions/${handle.id}/${handle.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 4, data: { content: 'up', allowed_mentions: { repliedUser: false } } }),
    });
    expect(callback.status).toBe(204);

    // A multipart body (a file): its payload_json is what is checked.
    const form = new FormData();
    form.append(
      'payload_json',
      JSON.stringify({ content: 'chart', attachments: [{ id: '0' }], sticker: 'x' }),
    );
    form.append('files[0]', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'chart.png');
    const channel = guild.channels[0]!.id;
    const post = await fetch(`${base}/channels/${channel}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${si.token}` },
      body: form,
    });
    expect(post.status).toBe(200);

    expect(si.specViolations()).toEqual([
      {
        method: 'POST',
        route: CALLBACK_ROUTE,
        pointer: '/data/allowed_mentions/repliedUser',
        message: 'is not declared by the API',
      },
      {
        method: 'POST',
        route: '/channels/{channel_id}/messages',
        pointer: '/sticker',
        message: 'is not declared by the API',
      },
    ]);
  });

  it('serves every route of the description, and a well-formed request to each is no violation', async () => {
    const guild = makeGuild({ channels: ['general'] });
    const si = await session.start({ guilds: [guild] });
    const handle = si.sendCommand({ name: 'up', guildId: guild.id });
    const app = si.applicationId;
    const hook = `/webhooks/${app}/${handle.token}`;
    const seen = new Set<string>();
    const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${si.restUrl}/v10${path}`, {
        method,
        headers: { authorization: `Bot ${si.token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      seen.add(`${method} ${specRoute(method, path.split('?')[0]!)}`);
      const text = await res.text();
      return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    };
    await call('GET', '/gateway');
    await call('GET', '/gateway/bot');
    await call('GET', '/users/@me');
    await call('GET', `/users/${si.botUser.id}`);
    await call('GET', '/applications/@me');
    await call('POST', '/users/@me/channels', { recipient_id: si.botUser.id });
    for (const commands of [
      `/applications/${app}/commands`,
      `/applications/${app}/guilds/${guild.id}/commands`,
    ]) {
      await call('PUT', commands, [{ name: 'up', description: 'Raise', default_member_permissions: '32' }]);
      const created = await call('POST', commands, { name: 'info', description: 'Look up' });
      await call('GET', commands);
      await call('GET', `${commands}/${String(created.id)}`);
      await call('PATCH', `${commands}/${String(created.id)}`, { description: 'Look something up' });
      await call('DELETE', `${commands}/${String(created.id)}`);
    }
    await call('GET', `/guilds/${guild.id}`);
    await call('GET', `/guilds/${guild.id}/channels`);
    await call('GET', `/guilds/${guild.id}/roles`);
    await call('GET', `/guilds/${guild.id}/members/${si.botUser.id}`);
    // A role below the bot's, which may manage roles: given to a member and taken off again.
    const held = si.guilds.get(guild.id);
    const botRole = held && botRoleOf(held, si.botUser.id);
    if (!held || !botRole) throw new Error('no bot role');
    botRole.position = 5;
    si.setRolePermissions(guild.id, botRole.id, Permission.ManageRoles);
    const given = makeRole({ name: 'pinged', position: 2 });
    held.roles.push(given);
    await call('PUT', `/guilds/${guild.id}/members/${si.botUser.id}/roles/${given.id}`);
    await call('DELETE', `/guilds/${guild.id}/members/${si.botUser.id}/roles/${given.id}`);
    await call('GET', `/channels/${guild.channels[0]!.id}`);
    const posted = await call('POST', `/channels/${guild.channels[0]!.id}/messages`, {
      content: 'hello',
      allowed_mentions: { parse: [] },
      nonce: '1',
      enforce_nonce: true,
    });
    await call('PATCH', `/channels/${guild.channels[0]!.id}/messages/${String(posted.id)}`, {
      content: 'hello again',
      allowed_mentions: { parse: [] },
    });
    await call('DELETE', `/channels/${guild.channels[0]!.id}/messages/${String(posted.id)}`);
    await call('POST', `/interactions/${handle.id}/${handle.token}/callback`, { type: 5 });
    await call('GET', hook);
    await call('GET', `${hook}/messages/@original`);
    await call('PATCH', `${hook}/messages/@original`, reply().data);
    const followUp = await call('POST', `${hook}?wait=true`, { content: 'more', flags: 64 });
    await call('GET', `${hook}/messages/${String(followUp.id)}`);
    await call('PATCH', `${hook}/messages/${String(followUp.id)}`, { content: 'edited' });
    await call('DELETE', `${hook}/messages/${String(followUp.id)}`);
    await call('DELETE', `${hook}/messages/@original`);

    expect([...seen].sort()).toEqual(SPEC_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(describeViolations(si.specViolations())).toBe('');
  });
});

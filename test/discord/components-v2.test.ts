// Components V2 messages (IS_COMPONENTS_V2) through the stand-in's own HTTP routes: interaction
// callbacks (4, 5, 7), the webhook's '@original' and follow-up edits, follow-ups and channel posts.
// What Discord refuses is refused with its error shape (400, 50035 and an `errors` tree, or 50006
// for an empty message); a well-formed V2 message is kept with its flag and components as sent.

import { PermissionFlagsBits } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { botRoleOf, type DiscordStandIn, type GuildFixture, makeGuild } from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();
const V2 = 1 << 15;
const EPHEMERAL = 1 << 6;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer read by the assertions
  body: any;
}

interface Upload {
  name: string;
  data: string;
  type?: string;
}

/** One request to the stand-in's REST API: JSON, or multipart (payload_json and files[n]) with uploads. */
async function call(
  si: DiscordStandIn,
  method: string,
  path: string,
  body: unknown,
  files: Upload[] = [],
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bot ${si.token}` };
  let payload: string | FormData;
  if (files.length > 0) {
    const form = new FormData();
    form.append('payload_json', JSON.stringify(body));
    files.forEach((f, i) => {
      form.append(`files[${i}]`, new Blob([f.data], { type: f.type ?? 'image/png' }), f.name);
    });
    payload = form;
  } else {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${si.restUrl}/v10${path}`, { method, headers, body: payload });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** The error codes Discord's tree holds at `path` (e.g. ['data', 'components', 0]). */
function codesAt(answer: Answer, path: Array<string | number>): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: walking the error tree
  let node: any = answer.body?.errors;
  for (const key of path) node = node?.[String(key)];
  return Array.isArray(node?._errors) ? node._errors.map((e: { code: string }) => e.code) : [];
}

/** Every error code anywhere in the tree. */
function allCodes(answer: Answer): string[] {
  const out: string[] = [];
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '_errors' && Array.isArray(value)) out.push(...value.map((e: { code: string }) => e.code));
      else visit(value);
    }
  };
  visit(answer.body?.errors);
  return out;
}

function expectInvalid(answer: Answer, path: Array<string | number>, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ code: 50035, message: 'Invalid Form Body' });
  expect(codesAt(answer, path), JSON.stringify(answer.body)).toContain(code);
}

// -- component builders ---------------------------------------------------------------------------

const text = (content: string) => ({ type: 10, content });
const button = (customId: string, label = customId) => ({ type: 2, style: 2, label, custom_id: customId });
const row = (...buttons: unknown[]) => ({ type: 1, components: buttons });
const thumbnail = (url: string, description?: string) => ({
  type: 11,
  media: { url },
  ...(description === undefined ? {} : { description }),
});
const section = (texts: unknown[], accessory?: unknown) => ({
  type: 9,
  components: texts,
  ...(accessory === undefined ? {} : { accessory }),
});
const gallery = (...items: Array<{ url: string; description?: string }>) => ({
  type: 12,
  items: items.map(({ url, description }) => ({
    media: { url },
    ...(description === undefined ? {} : { description }),
  })),
});
const container = (children: unknown[], accentColor?: number) => ({
  type: 17,
  components: children,
  ...(accentColor === undefined ? {} : { accent_color: accentColor }),
});
const separator = { type: 14, divider: true, spacing: 1 };

const CHART: Upload = { name: 'chart.png', data: 'not really a png' };

/** A V2 card as the bot is about to send it: every kind of component, the chart uploaded with it. */
function card(): unknown[] {
  return [
    container(
      [
        section(
          [text('## Kerdoku'), text('A bot for the server listing')],
          thumbnail('https://cdn.discordapp.com/avatars/1/a.png', 'Kerdoku avatar'),
        ),
        text('Votes this month: **42**'),
        separator,
        gallery({ url: 'attachment://chart.png', description: 'Votes per day' }),
        row(button('vote:1'), button('profile:1', 'Profile')),
      ],
      0x5865f2,
    ),
    text('-# updated <t:1700000000:R>'),
  ];
}

const v2 = (components: unknown[], extra: Record<string, unknown> = {}) => ({
  flags: V2,
  components,
  ...extra,
});

function world(): { guild: GuildFixture; channelId: string } {
  const guild = makeGuild({ name: 'Listing', channels: ['general'] });
  return { guild, channelId: guild.channels[0]!.id };
}

async function standIn(): Promise<{ si: DiscordStandIn; guild: GuildFixture; channelId: string }> {
  const { guild, channelId } = world();
  const si = await session.start({ guilds: [guild] });
  return { si, guild, channelId };
}

/** A fresh slash command's callback: the first answer to it (type 4 unless `type` says otherwise). */
async function reply(
  si: DiscordStandIn,
  guild: GuildFixture,
  data: unknown,
  files: Upload[] = [],
  type = 4,
): Promise<Answer> {
  const h = si.sendCommand({ guildId: guild.id, name: 'bot' });
  return call(si, 'POST', `/interactions/${h.id}/${h.token}/callback`, { type, data }, files);
}

describe('Components V2 messages in the stand-in', () => {
  it('accepts a well-formed V2 reply, follow-up and channel post, and keeps flags and components', async () => {
    const { si, guild, channelId } = await standIn();
    const body = v2(card(), { attachments: [{ id: '0', filename: 'chart.png' }] });
    const h = si.sendCommand({ guildId: guild.id, name: 'bot' });
    const answered = await call(
      si,
      'POST',
      `/interactions/${h.id}/${h.token}/callback?with_response=true`,
      { type: 4, data: body },
      [CHART],
    );
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.resource.message.flags & V2).toBe(V2);
    const original = h.view().original;
    expect((original?.flags ?? 0) & V2).toBe(V2);
    expect(original?.components).toEqual(card());

    const followUp = await call(si, 'POST', `/webhooks/${si.applicationId}/${h.token}?wait=true`, body, [
      CHART,
    ]);
    expect(followUp.status, JSON.stringify(followUp.body)).toBe(200);
    expect(followUp.body.flags & V2).toBe(V2);
    expect(followUp.body.components).toEqual(card());

    const posted = await call(si, 'POST', `/channels/${channelId}/messages`, body, [CHART]);
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const [stored] = si.channelMessages(channelId);
    expect(stored!.message.flags & V2).toBe(V2);
    expect(stored!.message.components).toEqual(card());
    expect(stored!.message.attachments).toMatchObject([{ filename: 'chart.png' }]);
    // The card is what Discord's API description allows, too.
    expect(si.specViolations()).toEqual([]);
  });

  it('refuses content, embeds, a poll and stickers beside the flag (legacy fields)', async () => {
    const { si, guild, channelId } = await standIn();
    const legacy: Array<[string, unknown]> = [
      ['content', 'hello'],
      ['embeds', [{ description: 'an embed' }]],
      ['poll', { question: { text: 'Best bot?' }, answers: [{ poll_media: { text: 'Kerdoku' } }] }],
      ['sticker_ids', ['123456789012345678']],
    ];
    for (const [field, value] of legacy) {
      const body = v2([text('hi')], { [field]: value });
      expectInvalid(
        await reply(si, guild, body),
        ['data', field],
        'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      );
      expectInvalid(
        await call(si, 'POST', `/channels/${channelId}/messages`, body),
        [field],
        'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      );
    }
    // Empty legacy fields are no legacy content.
    const empty = v2([text('hi')], { content: '', embeds: [], poll: null, sticker_ids: [] });
    expect((await reply(si, guild, empty)).status).toBe(204);
    expect((await call(si, 'POST', `/channels/${channelId}/messages`, empty)).status).toBe(200);
    // Without the flag they are what they always were.
    expect((await reply(si, guild, { content: 'hello', embeds: [{ description: 'x' }] })).status).toBe(204);
  });

  it('keeps the rules without the flag: action rows only at the top, at most 5', async () => {
    const { si, guild } = await standIn();
    expectInvalid(
      await reply(si, guild, { content: 'x', components: [text('hi')] }),
      ['data', 'components', 0],
      'UNION_TYPE_CHOICES',
    );
    const six = Array.from({ length: 6 }, (_, i) => row(button(`b${i}`)));
    expectInvalid(
      await reply(si, guild, { content: 'x', components: six }),
      ['data', 'components'],
      'BASE_TYPE_MAX_LENGTH',
    );
    // The same six rows are fine in a V2 message.
    expect((await reply(si, guild, v2(six))).status).toBe(204);
  });

  it('counts nested components toward the 40 a message may hold', async () => {
    const { si, guild } = await standIn();
    const texts = (n: number) => Array.from({ length: n }, (_, i) => text(`line ${i}`));
    // A container and 39 text displays: 40.
    expect((await reply(si, guild, v2([container(texts(39))]))).status).toBe(204);
    const over = await reply(si, guild, v2([container(texts(40))]));
    expectInvalid(over, ['data', 'components'], 'MESSAGE_COMPONENTS_MAX_EXCEEDED');
    // A row is counted with its buttons, a section with its texts and accessory.
    const rows = Array.from({ length: 6 }, (_, r) =>
      row(...Array.from({ length: 5 }, (_, b) => button(`r${r}b${b}`))),
    );
    expectInvalid(
      await reply(si, guild, v2([...rows, section([text('a'), text('b'), text('c')], button('acc'))])),
      ['data', 'components'],
      'MESSAGE_COMPONENTS_MAX_EXCEEDED',
    );
    expect((await reply(si, guild, v2([...rows, text('36 components')]))).status).toBe(204);
  });

  it('puts components only where Discord allows them', async () => {
    const { si, guild } = await standIn();
    const at = async (components: unknown[], path: Array<string | number>, code: string) =>
      expectInvalid(await reply(si, guild, v2(components)), ['data', 'components', ...path], code);
    // Top level: 1, 9, 10, 12, 13, 14, 17 (no bare button or thumbnail).
    await at([button('a')], [0], 'UNION_TYPE_CHOICES');
    await at([thumbnail('https://example.com/a.png')], [0], 'UNION_TYPE_CHOICES');
    // No container inside a container.
    await at([container([container([text('inner')])])], [0, 'components', 0], 'UNION_TYPE_CHOICES');
    // A section: 1 to 3 text displays, exactly one accessory, a button or a thumbnail.
    const acc = thumbnail('https://example.com/a.png');
    await at([section([], acc)], [0, 'components'], 'BASE_TYPE_BAD_LENGTH');
    await at(
      [section([text('1'), text('2'), text('3'), text('4')], acc)],
      [0, 'components'],
      'BASE_TYPE_BAD_LENGTH',
    );
    await at([section([separator], acc)], [0, 'components', 0], 'UNION_TYPE_CHOICES');
    await at([section([text('no accessory')])], [0, 'accessory'], 'BASE_TYPE_REQUIRED');
    await at([section([text('t')], text('not an accessory'))], [0, 'accessory'], 'UNION_TYPE_CHOICES');
    // The allowed placements, for contrast.
    const fine = [
      container([section([text('1'), text('2'), text('3')], button('go')), row(button('x')), separator]),
      section([text('t')], acc),
    ];
    expect((await reply(si, guild, v2(fine))).status).toBe(204);
  });

  it('holds a text display to 1..4000 characters, and all of them together to 4000', async () => {
    const { si, guild } = await standIn();
    expectInvalid(
      await reply(si, guild, v2([text('x'.repeat(4001))])),
      ['data', 'components', 0, 'content'],
      'BASE_TYPE_BAD_LENGTH',
    );
    expectInvalid(
      await reply(si, guild, v2([text('')])),
      ['data', 'components', 0, 'content'],
      'BASE_TYPE_BAD_LENGTH',
    );
    const split = v2([text('x'.repeat(2000)), container([section([text('y'.repeat(1))], button('b'))])]);
    expect((await reply(si, guild, split)).status).toBe(204);
    const tooMuch = v2([text('x'.repeat(2000)), container([text('y'.repeat(2001))])]);
    expectInvalid(
      await reply(si, guild, tooMuch),
      ['data', 'components'],
      'MESSAGE_TEXT_DISPLAY_TOTAL_LENGTH_EXCEEDED',
    );
    expect((await reply(si, guild, v2([text('x'.repeat(2000)), text('y'.repeat(2000))]))).status).toBe(204);
  });

  it('takes media from http(s) or a file of the same request; galleries of 1..10; descriptions to 1024', async () => {
    const { si, guild, channelId } = await standIn();
    const img = { url: 'https://example.com/a.png' };
    const at = async (
      components: unknown[],
      path: Array<string | number>,
      code: string,
      files: Upload[] = [],
    ) => expectInvalid(await reply(si, guild, v2(components), files), ['data', 'components', ...path], code);
    await at([gallery()], [0, 'items'], 'BASE_TYPE_BAD_LENGTH');
    await at([gallery(...Array.from({ length: 11 }, () => img))], [0, 'items'], 'BASE_TYPE_BAD_LENGTH');
    expect((await reply(si, guild, v2([gallery(...Array.from({ length: 10 }, () => img))]))).status).toBe(
      204,
    );
    await at(
      [gallery({ url: 'ftp://example.com/a.png' })],
      [0, 'items', 0, 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_URL_INVALID',
    );
    await at(
      [section([text('t')], thumbnail('javascript:alert(1)'))],
      [0, 'accessory', 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_URL_INVALID',
    );
    // attachment:// names a file uploaded with this very request.
    await at(
      [gallery({ url: 'attachment://chart.png' })],
      [0, 'items', 0, 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
    );
    await at(
      [gallery({ url: 'attachment://other.png' })],
      [0, 'items', 0, 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
      [CHART],
    );
    expect((await reply(si, guild, v2([gallery({ url: 'attachment://chart.png' })]), [CHART])).status).toBe(
      204,
    );
    // A channel post checks it the same way.
    expectInvalid(
      await call(
        si,
        'POST',
        `/channels/${channelId}/messages`,
        v2([gallery({ url: 'attachment://chart.png' })]),
      ),
      ['components', 0, 'items', 0, 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
    );
    await at(
      [gallery({ url: img.url, description: 'd'.repeat(1025) })],
      [0, 'items', 0, 'description'],
      'BASE_TYPE_BAD_LENGTH',
    );
    await at(
      [section([text('t')], thumbnail(img.url, 'd'.repeat(1025)))],
      [0, 'accessory', 'description'],
      'BASE_TYPE_BAD_LENGTH',
    );
    const longest = v2([gallery({ url: img.url, description: 'd'.repeat(1024) })]);
    expect((await reply(si, guild, longest)).status).toBe(204);
  });

  it('holds accent colours to 0..0xFFFFFF, rows to 1..5 buttons, and custom_ids and ids unique', async () => {
    const { si, guild } = await standIn();
    const at = async (components: unknown[], path: Array<string | number>, code: string) =>
      expectInvalid(await reply(si, guild, v2(components)), ['data', 'components', ...path], code);
    await at([container([text('t')], 0x1000000)], [0, 'accent_color'], 'NUMBER_TYPE_MAX');
    await at([container([text('t')], -1)], [0, 'accent_color'], 'NUMBER_TYPE_MIN');
    expect((await reply(si, guild, v2([container([text('t')], 0xffffff)]))).status).toBe(204);
    await at([row()], [0, 'components'], 'BASE_TYPE_BAD_LENGTH');
    await at(
      [row(...['a', 'b', 'c', 'd', 'e', 'f'].map((id) => button(id)))],
      [0, 'components'],
      'BASE_TYPE_BAD_LENGTH',
    );
    await at([row(button('x'.repeat(101)))], [0, 'components', 0, 'custom_id'], 'BASE_TYPE_BAD_LENGTH');
    // The same custom_id twice, once in a row and once as a section's accessory.
    await at(
      [row(button('vote')), container([section([text('t')], button('vote'))])],
      [1, 'components', 0, 'accessory', 'custom_id'],
      'COMPONENT_CUSTOM_ID_DUPLICATED',
    );
    await at(
      [{ ...text('a'), id: 7 }, container([{ ...text('b'), id: 7 }])],
      [1, 'components', 0, 'id'],
      'COMPONENT_ID_DUPLICATED',
    );
    const distinct = [
      { ...text('a'), id: 7 },
      { ...text('b'), id: 8 },
      row(button('vote'), button('profile')),
    ];
    expect((await reply(si, guild, v2(distinct))).status).toBe(204);
  });

  it('answers an empty V2 message as empty (50006)', async () => {
    const { si, guild, channelId } = await standIn();
    const empty = await reply(si, guild, v2([]));
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'Cannot send an empty message', code: 50006 });
    const post = await call(si, 'POST', `/channels/${channelId}/messages`, v2([]));
    expect(post.body).toMatchObject({ code: 50006 });
    expect((await reply(si, guild, v2([text('something')]))).status).toBe(204);
  });

  it('lets a deferred response (type 5) carry the ephemeral flag and no other', async () => {
    const { si, guild } = await standIn();
    expectInvalid(
      await reply(si, guild, { flags: V2 }, [], 5),
      ['data', 'flags'],
      'INTERACTION_RESPONSE_FLAGS_INVALID',
    );
    expectInvalid(
      await reply(si, guild, { flags: EPHEMERAL | V2 }, [], 5),
      ['data', 'flags'],
      'INTERACTION_RESPONSE_FLAGS_INVALID',
    );
    expectInvalid(
      await reply(si, guild, { flags: 1 << 12 }, [], 5),
      ['data', 'flags'],
      'INTERACTION_RESPONSE_FLAGS_INVALID',
    );
    expect((await reply(si, guild, { flags: EPHEMERAL }, [], 5)).status).toBe(204);
    expect((await reply(si, guild, { flags: 0 }, [], 5)).status).toBe(204);
    expect((await reply(si, guild, undefined, [], 5)).status).toBe(204);
  });

  it('sets the flag by an edit once legacy fields are cleared, and never takes it off', async () => {
    const { si, guild } = await standIn();
    const h = si.sendCommand({ guildId: guild.id, name: 'bot' });
    const first = await call(si, 'POST', `/interactions/${h.id}/${h.token}/callback`, {
      type: 4,
      data: { content: 'a listing', embeds: [{ description: 'old card' }] },
    });
    expect(first.status).toBe(204);
    const original = `/webhooks/${si.applicationId}/${h.token}/messages/@original`;
    const edit = (body: unknown, files: Upload[] = []) => call(si, 'PATCH', original, body, files);

    // The flag with the content and embed still on the message: refused, both named.
    const kept = await edit(v2([text('new card')]));
    expectInvalid(kept, ['content'], 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2');
    expect(codesAt(kept, ['embeds'])).toEqual(['MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2']);
    expectInvalid(
      await edit(v2([text('new card')], { content: '' })),
      ['embeds'],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
    );
    expect((h.view().original?.flags ?? 0) & V2).toBe(0);

    const upgraded = await edit(
      v2([gallery({ url: 'attachment://chart.png' })], {
        content: null,
        embeds: [],
        attachments: [{ id: '0', filename: 'chart.png' }],
      }),
      [CHART],
    );
    expect(upgraded.status, JSON.stringify(upgraded.body)).toBe(200);
    expect(upgraded.body.flags & V2).toBe(V2);
    expect(h.view().original).toMatchObject({ content: '', embeds: [] });

    // Taken off: refused; an edit without `flags` keeps it, and is held to the V2 rules.
    expectInvalid(
      await edit({ flags: 0, components: [row(button('a'))] }),
      ['flags'],
      'MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG',
    );
    expectInvalid(
      await edit({ content: 'back to text' }),
      ['content'],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
    );
    expectInvalid(
      await edit({ components: [thumbnail('https://example.com/a.png')] }),
      ['components', 0],
      'UNION_TYPE_CHOICES',
    );
    // The message's own attachment may be named again without uploading it anew.
    const again = await edit({ components: [text('still V2'), gallery({ url: 'attachment://chart.png' })] });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.flags & V2).toBe(V2);
    expect((h.view().original?.flags ?? 0) & V2).toBe(V2);
    expect(h.view().original?.components).toEqual([
      text('still V2'),
      gallery({ url: 'attachment://chart.png' }),
    ]);
    // Unless the edit lets it go.
    expectInvalid(
      await edit({ components: [gallery({ url: 'attachment://chart.png' })], attachments: [] }),
      ['components', 0, 'items', 0, 'media', 'url'],
      'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
    );
  });

  it('holds follow-up edits and a button’s update (type 7) to the same rules', async () => {
    const { si, guild } = await standIn();
    const h = si.sendCommand({ guildId: guild.id, name: 'bot' });
    expect((await call(si, 'POST', `/interactions/${h.id}/${h.token}/callback`, { type: 5 })).status).toBe(
      204,
    );
    // The deferred reply is filled in with a V2 card: the flag set by the edit.
    const filled = await call(
      si,
      'PATCH',
      `/webhooks/${si.applicationId}/${h.token}/messages/@original`,
      v2([text('card'), row(button('next'))]),
    );
    expect(filled.status, JSON.stringify(filled.body)).toBe(200);
    expect(filled.body.flags & V2).toBe(V2);

    const followUp = await call(
      si,
      'POST',
      `/webhooks/${si.applicationId}/${h.token}?wait=true`,
      v2([text('more')]),
    );
    expect(followUp.status).toBe(200);
    const path = `/webhooks/${si.applicationId}/${h.token}/messages/${followUp.body.id}`;
    expectInvalid(
      await call(si, 'PATCH', path, { flags: 0 }),
      ['flags'],
      'MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG',
    );
    expectInvalid(
      await call(si, 'PATCH', path, { embeds: [{ description: 'x' }] }),
      ['embeds'],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
    );
    expect((await call(si, 'PATCH', path, { components: [text('edited')] })).status).toBe(200);

    // A click on the card's button, answered by updating the card.
    const click = () => si.sendButton({ guildId: guild.id, customId: 'next', messageId: filled.body.id });
    const update = (data: unknown) => {
      const b = click();
      return call(si, 'POST', `/interactions/${b.id}/${b.token}/callback`, { type: 7, data });
    };
    expectInvalid(
      await update({ flags: 0, components: [row(button('next'))] }),
      ['data', 'flags'],
      'MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG',
    );
    expectInvalid(
      await update({ content: 'page 2' }),
      ['data', 'content'],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
    );
    expectInvalid(
      await update({ components: [row(button('a'), button('a'))] }),
      ['data', 'components', 0, 'components', 1, 'custom_id'],
      'COMPONENT_CUSTOM_ID_DUPLICATED',
    );
    expect((await update({ components: [text('page 2'), row(button('next'))] })).status).toBe(204);
    expect(h.view().original?.components).toEqual([text('page 2'), row(button('next'))]);
    expect((h.view().original?.flags ?? 0) & V2).toBe(V2);
  });

  it('posts V2 to a channel without Embed Links; files still need Attach Files', async () => {
    const { si, guild, channelId } = await standIn();
    const botRole = botRoleOf(si.guilds.get(guild.id)!, si.botUser.id)!;
    // Neither @everyone nor the bot's role grants Embed Links or Attach Files.
    const base = PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
    si.setRolePermissions(guild.id, guild.id, base);
    si.setRolePermissions(guild.id, botRole.id, base);
    const path = `/channels/${channelId}/messages`;
    const plain = await call(si, 'POST', path, v2([container([text('card')], 0x00ff00)]));
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.flags & V2).toBe(V2);
    const embed = await call(si, 'POST', path, { embeds: [{ description: 'card' }] });
    expect(embed).toMatchObject({ status: 403, body: { code: 50013 } });
    const withFile = await call(si, 'POST', path, v2([gallery({ url: 'attachment://chart.png' })]), [CHART]);
    expect(withFile).toMatchObject({ status: 403, body: { code: 50013 } });
    si.setRolePermissions(guild.id, botRole.id, base | PermissionFlagsBits.AttachFiles);
    const allowed = await call(si, 'POST', path, v2([gallery({ url: 'attachment://chart.png' })]), [CHART]);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(si.channelMessages(channelId).map((m) => m.message.flags & V2)).toEqual([V2, V2]);
    expect(allCodes(plain)).toEqual([]);
  });
});

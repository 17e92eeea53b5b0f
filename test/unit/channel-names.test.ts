/**
 * ChannelNames: the report channel of each guild followed through the gateway's dispatches
 * (system channel, else the first text channel, else none), and the names of the channels
 * interactions come from. Payloads are shaped as Discord sends them.
 */
import { ChannelType, GatewayDispatchEvents as E } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { ChannelNames } from '../../src/gateway/channel-names.js';

const GUILD = '900000000000000001';

function channel(id: string, name: string, type: number = ChannelType.GuildText) {
  return { id, name, type, guild_id: GUILD, position: 0, permission_overwrites: [] };
}

/** A guild with a category, text channels 11 and 12, a voice channel and an announcement channel. */
function guildCreate(system: string | null, channels = defaultChannels()) {
  return { id: GUILD, name: 'Guild', system_channel_id: system, channels, roles: [], member_count: 5 };
}

function defaultChannels() {
  return [
    channel('10', 'Text Channels', ChannelType.GuildCategory),
    channel('11', 'general'),
    channel('12', 'rules'),
    channel('13', 'General', ChannelType.GuildVoice),
    channel('14', 'news', ChannelType.GuildAnnouncement),
  ];
}

function known(system: string | null = '12', channels = defaultChannels()): ChannelNames {
  const names = new ChannelNames();
  names.handle(E.GuildCreate, guildCreate(system, channels));
  return names;
}

describe('ChannelNames: the channel a report names', () => {
  it('is the system channel, else the first text channel in Discord’s order, else none', () => {
    expect(known('12').reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
    expect(known(null).reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
    // An announcement channel can be named as the system channel, never as the fallback.
    expect(known('14').reportChannel(GUILD)).toEqual({ id: '14', name: 'news' });
    const noText = known(null, [channel('13', 'General', ChannelType.GuildVoice), channel('14', 'news', 5)]);
    expect(noText.reportChannel(GUILD)).toBeUndefined();
    expect(new ChannelNames().reportChannel(GUILD)).toBeUndefined();
  });

  it('a system channel id it cannot name (a voice channel, an unknown one) falls back to the first text channel', () => {
    expect(known('13').reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
    expect(known('99').reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
  });

  it('follows renames, deletions and new channels', () => {
    const names = known(null);
    names.handle(E.ChannelUpdate, channel('11', 'lobby'));
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'lobby' });
    names.handle(E.ChannelDelete, channel('11', 'lobby'));
    expect(names.reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
    names.handle(E.ChannelDelete, channel('12', 'rules'));
    expect(names.reportChannel(GUILD)).toBeUndefined();
    names.handle(E.ChannelCreate, channel('15', 'fresh'));
    names.handle(E.ChannelCreate, channel('16', 'fresher'));
    expect(names.reportChannel(GUILD)).toEqual({ id: '15', name: 'fresh' });
  });

  it('a channel created later comes after those Discord listed', () => {
    const names = known(null);
    names.handle(E.ChannelCreate, channel('9', 'older-id-but-new'));
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
  });

  it('follows the system channel as the guild changes it, and its renames', () => {
    const names = known('12');
    names.handle(E.GuildUpdate, { id: GUILD, name: 'Guild', system_channel_id: '11' });
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
    names.handle(E.ChannelUpdate, channel('11', 'welcome'));
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'welcome' });
    names.handle(E.GuildUpdate, { id: GUILD, name: 'Guild', system_channel_id: null });
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'welcome' });
    // A GUILD_UPDATE without the field leaves the system channel as it was.
    names.handle(E.GuildUpdate, { id: GUILD, system_channel_id: '12' });
    names.handle(E.GuildUpdate, { id: GUILD, name: 'Renamed' });
    expect(names.reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
  });

  it('a channel whose type changes moves to the end of its new kind, or out', () => {
    const names = known(null);
    names.handle(E.ChannelUpdate, channel('11', 'general', ChannelType.GuildAnnouncement));
    expect(names.reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
    names.handle(E.GuildUpdate, { id: GUILD, system_channel_id: '11' });
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
    names.handle(E.ChannelUpdate, channel('11', 'general', ChannelType.GuildText));
    names.handle(E.GuildUpdate, { id: GUILD, system_channel_id: null });
    expect(names.reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
    names.handle(E.ChannelUpdate, channel('12', 'rules', ChannelType.GuildForum));
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
  });

  it('channels of other guilds, unknown guilds and threads change nothing', () => {
    const names = known(null);
    names.handle(E.ChannelCreate, { ...channel('20', 'elsewhere'), guild_id: '900000000000000002' });
    names.handle(E.ChannelDelete, { ...channel('11', 'general'), guild_id: '900000000000000002' });
    names.handle(E.ThreadCreate, { ...channel('21', 'a thread', ChannelType.PublicThread), parent_id: '11' });
    expect(names.reportChannel(GUILD)).toEqual({ id: '11', name: 'general' });
    expect(names.guildCount).toBe(1);
  });

  it('an outage keeps what is known; a GUILD_CREATE replaces it; forget drops it', () => {
    const names = known('12');
    names.handle(E.GuildCreate, { id: GUILD, unavailable: true });
    expect(names.reportChannel(GUILD)).toEqual({ id: '12', name: 'rules' });
    names.handle(E.GuildCreate, guildCreate(null, [channel('30', 'only')]));
    expect(names.reportChannel(GUILD)).toEqual({ id: '30', name: 'only' });
    names.forget(GUILD);
    expect(names.reportChannel(GUILD)).toBeUndefined();
    expect(names.guildCount).toBe(0);
  });

  it('never throws into discord.js: bad payloads are skipped, a failure goes to onError', () => {
    const errors: string[] = [];
    const names = new ChannelNames({ onError: (_err, event) => errors.push(event) });
    for (const event of [E.GuildCreate, E.GuildUpdate, E.ChannelCreate, E.ChannelUpdate, E.ChannelDelete]) {
      for (const data of [null, 'text', 42, {}, { id: 7 }, { id: GUILD, channels: 'none' }]) {
        expect(() => names.handle(event, data)).not.toThrow();
      }
    }
    names.handle(E.GuildCreate, guildCreate(null, [{ id: '40' }, null, channel('41', 'kept')] as never));
    expect(names.reportChannel(GUILD)).toEqual({ id: '41', name: 'kept' });
    expect(errors).toEqual([]);
    const hostile = {
      id: GUILD,
      get channels(): unknown[] {
        throw new Error('unreadable');
      },
    };
    expect(() => names.handle(E.GuildCreate, hostile)).not.toThrow();
    expect(errors).toEqual([E.GuildCreate]);
  });
});

describe('ChannelNames: channels interactions come from', () => {
  const interaction = (channelId: string, name?: string) => ({
    id: '1',
    type: 2,
    guild_id: GUILD,
    channel_id: channelId,
    channel: { id: channelId, type: 2, ...(name === undefined ? {} : { name }) },
  });

  it('names the channel of an interaction, whatever its kind, and follows a rename', () => {
    const names = new ChannelNames();
    names.handle(E.InteractionCreate, interaction('50', 'Lounge'));
    expect(names.interactionChannelName('50')).toBe('Lounge');
    names.handle(E.InteractionCreate, interaction('50', 'Quiet Lounge'));
    expect(names.interactionChannelName('50')).toBe('Quiet Lounge');
    // A DM channel has no name: nothing is remembered.
    names.handle(E.InteractionCreate, { id: '2', type: 2, channel: { id: '51', type: 1, recipients: [] } });
    names.handle(E.InteractionCreate, interaction('52', ''));
    expect(names.interactionChannelName('51')).toBeUndefined();
    expect(names.interactionChannelName('52')).toBeUndefined();
  });

  it('keeps only the most recently seen channels', () => {
    const names = new ChannelNames({ recentLimit: 3 });
    for (const id of ['60', '61', '62']) names.handle(E.InteractionCreate, interaction(id, `c${id}`));
    names.handle(E.InteractionCreate, interaction('60', 'c60')); // seen again: now the most recent
    names.handle(E.InteractionCreate, interaction('63', 'c63'));
    expect(names.interactionChannelName('61')).toBeUndefined();
    expect(['60', '62', '63'].map((id) => names.interactionChannelName(id))).toEqual(['c60', 'c62', 'c63']);
  });
});

/**
 * Guilds as a bot with only the Guilds intent sees them in GUILD_CREATE: categories, text and
 * voice channels, a handful of roles, custom emojis and the odd sticker, and no members but
 * the bot's own. Sizes vary per guild from a fixed seed, so every run sends the same payloads.
 */
import {
  type ChannelFixture,
  ChannelKind,
  type GuildFixture,
  makeGuilds,
  makeRole,
  makeTextChannel,
  snowflake,
} from '../../test/discord/index.js';
import { seededRandom as rng } from '../../test/support/random.js';

function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

const TEXT_NAMES = [
  'general',
  'rules',
  'announcements',
  'off-topic',
  'memes',
  'media',
  'bot-commands',
  'help',
];
const VOICE_NAMES = ['General', 'Gaming', 'Music', 'AFK', 'Chill'];
const CATEGORY_NAMES = ['Information', 'Text Channels', 'Voice Channels', 'Community'];
const ROLE_NAMES = ['Admin', 'Moderator', 'Member', 'VIP', 'Muted', 'Booster', 'Helper', 'Events'];

/** Per guild: 1–3 categories, 3–10 text, 1–4 voice channels; 2–10 roles; 0–20 emojis; 0–2 stickers. */
export const GUILD_MIX =
  '1–3 categories, 3–10 text and 1–4 voice channels, 2–10 roles besides @everyone and the bot’s, ' +
  '0–20 custom emojis, 0–2 stickers, only the bot as member (Guilds intent)';

function channelsFor(random: () => number): ChannelFixture[] {
  const channels: ChannelFixture[] = [];
  const categories = between(random, 1, 3);
  const parents: string[] = [];
  for (let i = 0; i < categories; i++) {
    const category = makeTextChannel({
      type: ChannelKind.GuildCategory,
      name: CATEGORY_NAMES[i % CATEGORY_NAMES.length] ?? 'Category',
      position: i,
    });
    parents.push(category.id);
    channels.push(category);
  }
  const text = between(random, 3, 10);
  for (let i = 0; i < text; i++) {
    channels.push(
      makeTextChannel({
        name: `${TEXT_NAMES[i % TEXT_NAMES.length] ?? 'chat'}${i >= TEXT_NAMES.length ? `-${i}` : ''}`,
        position: i,
        parentId: parents[i % parents.length] ?? null,
        topic: random() < 0.4 ? 'A place to talk about anything and everything in this server' : null,
      }),
    );
  }
  const voice = between(random, 1, 4);
  for (let i = 0; i < voice; i++) {
    channels.push(
      makeTextChannel({
        type: ChannelKind.GuildVoice,
        name: VOICE_NAMES[i % VOICE_NAMES.length] ?? 'Voice',
        position: i,
        parentId: parents[parents.length - 1] ?? null,
      }),
    );
  }
  return channels;
}

function emoji(random: () => number, index: number): Record<string, unknown> {
  return {
    id: snowflake(),
    name: `emoji_${index}_${Math.floor(random() * 1e6).toString(36)}`,
    roles: [],
    require_colons: true,
    managed: false,
    animated: random() < 0.2,
    available: true,
  };
}

function sticker(guildId: string, index: number): Record<string, unknown> {
  return {
    id: snowflake(),
    name: `sticker ${index}`,
    tags: 'smile',
    type: 2,
    format_type: 1,
    description: 'A sticker of this server',
    available: true,
    guild_id: guildId,
  };
}

/** `n` guilds with the mix above; ids spread evenly over any shard count. */
export function realisticGuilds(n: number, seed = 1): GuildFixture[] {
  const guilds = makeGuilds(n, { memberCountOf: (i) => 5 + ((i * 7919) % 3000) });
  guilds.forEach((guild, i) => {
    const random = rng(seed * 1_000_003 + i);
    guild.channels = channelsFor(random);
    guild.system_channel_id = guild.channels.find((c) => c.type === ChannelKind.GuildText)?.id ?? null;
    const roles = between(random, 2, 10);
    for (let r = 0; r < roles; r++) {
      guild.roles.push(
        makeRole({
          name: ROLE_NAMES[r % ROLE_NAMES.length] ?? 'role',
          color: Math.floor(random() * 0xffffff),
          position: r + 1,
          permissions: r === 0 ? '8' : '104324673',
        }),
      );
    }
    const emojis = between(random, 0, 20);
    for (let e = 0; e < emojis; e++) guild.emojis.push(emoji(random, e));
    const stickers = between(random, 0, 2);
    for (let s = 0; s < stickers; s++) guild.stickers.push(sticker(guild.id, s));
  });
  return guilds;
}

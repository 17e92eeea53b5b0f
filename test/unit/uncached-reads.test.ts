/**
 * discord.js keeps no channels and no roles for this bot (discord-client.ts), so whatever reads
 * them gets nothing: an empty collection, null, or a TypeError deep inside discord.js. No code of
 * the bot may read them; what it needs of channels comes from ChannelNames, permissions from the
 * interaction. This reads the sources (comments left out) for the ways in.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const FORBIDDEN: Array<[RegExp, string]> = [
  [/\.channels\.(cache|resolve|resolveId)\b/, 'a channel cache'],
  [/\bclient\.channels\b/, 'the client’s channel cache'],
  [/\binteraction\.channel\b/, 'interaction.channel (null: use deps.discord.channelName)'],
  [/\.(system|rules|afk|publicUpdates|safetyAlerts|widget)Channel\b/, 'a guild channel getter'],
  [/\.roles\.(cache|everyone|highest|resolve)\b/, 'the role cache'],
  [/\.permissionsFor\(/, 'permissions computed from the caches'],
  [/\.members\.me\b/, 'the bot’s member (its permissions need the role cache)'],
  [/\bmember\.(permissions|roles)\b/, 'a member’s roles or permissions (use memberPermissions)'],
];

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The code without its comments (a URL in a string loses its tail, which is fine here). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}

function offences(text: string): string[] {
  const found: string[] = [];
  code(text)
    .split('\n')
    .forEach((line, i) => {
      for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) found.push(`${i + 1}: ${what}`);
    });
  return found;
}

describe('reads of what discord.js does not cache', () => {
  it('catches the ways in (and ignores comments)', () => {
    expect(offences('const c = interaction.channel;')).toHaveLength(1);
    expect(offences('const id = interaction.channelId;')).toEqual([]);
    expect(offences('guild.channels.cache.find((c) => c.type === 0)')).toHaveLength(1);
    expect(offences('const s = guild.systemChannel ?? null;')).toHaveLength(1);
    expect(offences('const s = guild.systemChannelId;')).toEqual([]);
    expect(offences('guild.roles.everyone.permissions')).toHaveLength(1);
    expect(offences('channel.permissionsFor(member)')).toHaveLength(1);
    expect(offences('// interaction.channel is null\n/* guild.roles.cache */')).toEqual([]);
  });

  it('no source of the bot or its commands reads them', () => {
    const found = [...sources('src'), ...sources('commands')].flatMap((file) =>
      offences(readFileSync(file, 'utf8')).map((o) => `${file.slice(root.length)}:${o}`),
    );
    expect(found).toEqual([]);
  });
});

/**
 * v3's numeric enums as names (docs-v3 `docs/api/index.mdx` ResourceStatus, `bots.mdx` Library).
 * A value not listed here is kept as its number, never refused: "new ones may be added".
 */

/** ResourceStatus: 0 Hidden, 1 Public, 2 Banned, 3 Pending (as the open strings v2 used). */
const STATUSES: Readonly<Record<number, string>> = { 0: 'HIDDEN', 1: 'PUBLIC', 2: 'BANNED', 3: 'PENDING' };

/** Library, 1 to 12 (0: none chosen, boticordpy and botikotlin). */
const LIBRARIES: Readonly<Record<number, string>> = {
  1: 'Discord4J',
  2: 'Discordcr',
  3: 'DiscordGO',
  4: 'Discordoo',
  5: 'DSharpPlus',
  6: 'Discord.js',
  7: 'Discord.Net',
  8: 'Discord.py',
  9: 'Eris',
  10: 'Javacord',
  11: 'JDA',
  12: 'Other',
};

export function statusName(value: number | string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return STATUSES[value] ?? String(value);
  return value;
}

export function libraryName(value: number | string | null | undefined): string | null {
  if (value === null || value === undefined || value === '' || value === 0) return null;
  if (typeof value === 'number') return LIBRARIES[value] ?? String(value);
  return value;
}

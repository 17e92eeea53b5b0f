/**
 * Hostile reminder templates, the same on every run: mass and role mentions, a mention of
 * someone else, a zero-width or right-to-left mark in front of `@everyone`, markdown that hides a
 * mention, a link named `@everyone`, and the placeholders repeated. For a server's reminder:
 * whatever an admin typed, it pings the configured role and no one else.
 */
export const HOSTILE_TEMPLATE_PIECES: readonly string[] = [
  '@everyone',
  '@here',
  '<@&{role}>',
  '<@1234567890123456789>',
  '<@&1234567890123456789>',
  '@\u200beveryone',
  '**{server}** ||@everyone|| `@here`',
  '> @everyone\n# {command} {time}',
  '{server}{server}{server}',
  '\u202e@everyone\u202c',
  '[@everyone](https://example.com)',
  '<@!1234567890123456789> {role}',
];

/** The i-th template: two of the pieces around `i`; the pairs repeat every HOSTILE_TEMPLATE_PIECES.length. */
export function hostileTemplate(i: number): string {
  const pieces = HOSTILE_TEMPLATE_PIECES;
  return `${pieces[i % pieces.length]} ${i} ${pieces[(i * 7 + 3) % pieces.length]}`.slice(0, 1_000);
}

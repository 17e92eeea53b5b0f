/**
 * Hostile comment texts, generated from a seed (the same ones on every run): mentions of every
 * kind, markdown that would hide or restyle, links, control, zero-width and bidi characters,
 * Cyrillic and emoji, code fences that never close, walls of newlines and texts far over any
 * embed's limit. For the webhook's comments: whatever the directory relays, nothing pings and
 * nothing breaks.
 */
import { seededRandom } from './random.js';

export const HOSTILE_PIECES: readonly string[] = [
  '@everyone',
  '@here',
  '@ everyone',
  '＠everyone',
  '@\u200beveryone',
  '<@310000000000000001>',
  '<@!310000000000000002>',
  '<@&310000000000000003>',
  '<#310000000000000004>',
  '</up:310000000000000005>',
  '<t:1700000000:R>',
  '<a:party:310000000000000006>',
  '**bold**',
  '__underline__',
  '~~strike~~',
  '||spoiler||',
  '`code`',
  '```js\nalert(1)',
  '```',
  '> quote',
  '>>> block quote',
  '# Heading',
  '-# subtext',
  '- list',
  '1. item',
  '[click](https://evil.example/)',
  '[@everyone](https://evil.example/)',
  'https://discord.gg/invite',
  '<https://evil.example/>',
  '\\',
  '\\*',
  '*',
  '_',
  '\u0000',
  '\u0007',
  '\u001b[31m',
  '\r',
  '\n',
  '\n\n\n\n\n\n',
  '\t',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\ud83d',
  'Привет, сервер!',
  'Отличный сервер 👍',
  '🎉🔥💎',
  '<script>alert(1)</script>',
  '{"type":"new_server_comment"}',
  '$' + '{process.env.DISCORD_TOKEN}',
  '{{server}}',
  '%s%s%s',
  ':thumbsup:',
  ' ',
];

/** `count` texts: most a few pieces, some single pieces, some walls over 4,000 characters. */
export function hostileTexts(count: number, seed = 16): string[] {
  const random = seededRandom(seed);
  const pick = () => HOSTILE_PIECES[Math.floor(random() * HOSTILE_PIECES.length)] ?? '';
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    const shape = random();
    if (shape < 0.1) texts.push(pick());
    else if (shape < 0.15) texts.push(pick().repeat(2_000).slice(0, 6_000));
    else if (shape < 0.2) texts.push(Array.from({ length: 400 }, pick).join(''));
    else
      texts.push(Array.from({ length: 2 + Math.floor(random() * 8) }, pick).join(random() < 0.5 ? ' ' : ''));
  }
  return texts;
}

/**
 * Hostile references for /bot and /server, generated from a seed so every run sends the same
 * ones: traversal and encoded paths, queries and fragments, unicode tricks, mentions, markdown,
 * other hosts and schemes, over-long strings and near-valid references.
 */
import { seededRandom } from '../support/random.js';

const SNOWFLAKE_LIKE = '123456789012345678';
const PIECES: readonly string[] = [
  // other routes, by traversal and by encoding
  '../links/get',
  '..%2Flinks%2Fget',
  '..%2F..%2Fprofile',
  '%2F',
  '%2e%2e%2f',
  '..',
  '.',
  '/',
  '\\..\\links',
  'kerdoku/../../links/get',
  'kerdoku/comments',
  '/v2/links/get',
  '%00',
  '\u0000',
  // query and fragment
  '?',
  '#',
  '&',
  '?x=1&y=2',
  'kerdoku?with=1',
  'kerdoku#top',
  '%3F',
  '%23',
  ';',
  // unicode
  '\u202E',
  '\u200B',
  '\u200D',
  '\uFEFF',
  '\u2066',
  '🤖',
  '👨‍👩‍👧',
  'e\u0301',
  'Z̷̢͓a̵l̴g̶o̷',
  '７２４６６３３６０９３４７７２７９７',
  '٧٢٤٦٦٣٣٦٠٩٣٤٧٧٢٧٩٧',
  'кердоку',
  // mentions
  '@everyone',
  '@here',
  `<@&${SNOWFLAKE_LIKE}>`,
  `<@${SNOWFLAKE_LIKE}>`,
  `<@!${SNOWFLAKE_LIKE}>`,
  `<#${SNOWFLAKE_LIKE}>`,
  '<@&724663360934772797>',
  // markdown
  '**bold**',
  '`code`',
  '```js\nx\n```',
  '[click](https://evil.example/)',
  '||spoiler||',
  '> quote',
  '# heading',
  '~~strike~~',
  '__under__',
  // other hosts and schemes
  'https://evil.example/bot/kerdoku',
  'https://evil.example/server/722424773233213460',
  'http://127.0.0.1:1/bot/724663360934772797',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'ftp://evil.example/bot/kerdoku',
  'data:text/html,<script>alert(1)</script>',
  '//evil.example/bot/kerdoku',
  'https://user:pass@evil.example/bot/kerdoku',
  'https://boticord.top/bot/../links/get',
  'https://boticord.top/bot/%2e%2e',
  'https://boticord.top/bot/..%2Flinks',
  'https://boticord.top/bot/kerdoku?x=../links',
  'https://boticord.top/b/kerdoku#../links',
  'https://boticord.top/s/kerdoku/extra',
  // plausible references
  'kerdoku',
  '724663360934772797',
  '722424773233213460',
  'boticord',
  'a',
  '_-_',
  ' ',
  '\t',
  '\n',
];

function randomShortCode(rand: () => number, length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(rand() * alphabet.length)];
  return out;
}

function randomDigits(rand: () => number, length: number): string {
  let out = String(1 + Math.floor(rand() * 9));
  while (out.length < length) out += String(Math.floor(rand() * 10));
  return out;
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

/** Percent-encodes some characters of a string at random (upper or lower case hex). */
function sprinkleEncoding(rand: () => number, text: string): string {
  return [...text]
    .map((ch) => {
      if (rand() > 0.3) return ch;
      const hex = [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      return rand() < 0.5 ? hex : hex.toUpperCase();
    })
    .join('');
}

/** One hostile string: a piece, a few pieces glued, a long one, a near-reference, or an encoded one. */
function hostile(rand: () => number, i: number): string {
  switch (i % 8) {
    case 0:
      return pick(rand, PIECES);
    case 1: {
      const n = 2 + Math.floor(rand() * 3);
      const parts = Array.from({ length: n }, () => pick(rand, PIECES));
      return parts.join(pick(rand, ['', '/', ' ', '%2F', '?', '#', '\u200B']));
    }
    case 2: {
      const unit = pick(rand, ['a', '7', '../', '%2F', '\u202E', '🤖', '@everyone ', 'é']);
      const length = pick(rand, [201, 513, 2_000, 6_001, 10_000]);
      return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
    }
    case 3:
      // A short code of the wrong length (33) or one that fits, with something after it.
      return rand() < 0.5
        ? randomShortCode(rand, 33)
        : `${randomShortCode(rand, 1 + Math.floor(rand() * 32))}${pick(rand, PIECES)}`;
    case 4:
      // Digits of a wrong length, or a snowflake wrapped in something.
      return rand() < 0.5
        ? randomDigits(rand, pick(rand, [1, 16, 21, 40]))
        : `${pick(rand, ['<@', '<@&', '<#', '@', '#', ''])}${randomDigits(rand, 18)}` +
            pick(rand, ['>', '/', '?', '']);
    case 5:
      return sprinkleEncoding(rand, pick(rand, PIECES));
    case 6: {
      const section = pick(rand, ['bot', 'b', 'server', 's', 'BOT', 'links', 'profile']);
      const host = pick(rand, ['boticord.top', 'evil.example', '127.0.0.1:9', 'xn--80ak6aa92e.com']);
      const ref = rand() < 0.5 ? randomShortCode(rand, 8) : pick(rand, PIECES);
      return `${pick(rand, ['https', 'http', 'HTTPS', 'ws', 'mailto'])}://${host}/${section}/${ref}`;
    }
    default:
      // Valid-looking references: they go to the directory (and mostly are not there).
      return rand() < 0.5 ? randomShortCode(rand, 1 + Math.floor(rand() * 32)) : randomDigits(rand, 18);
  }
}

/** `count` hostile strings from `seed`, always the same ones. */
export function hostileInputs(seed: number, count: number): string[] {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => hostile(rand, i));
}

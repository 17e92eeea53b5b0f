/**
 * The one unsafe set: escaped on every CLI write and log line, removed from what goes to Discord.
 * And run() when a write fails, in process.
 */
import { describe, expect, it } from 'vitest';
import { printer } from '../../src/cli/output.js';
import { run } from '../../src/cli/run.js';
import { renderBotCard } from '../../src/render/cards.js';
import { escapeControls, removeControls } from '../../src/text/controls.js';
import { en, realBot } from './render/helpers.js';

/** The class, as ranges of code points written out apart from the code under test. */
const UNSAFE_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x08],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x2028, 0x202e],
  [0x2066, 0x2069],
  [0xfeff, 0xfeff],
];

const unsafe = (code: number): boolean => UNSAFE_RANGES.some(([from, to]) => code >= from && code <= to);

describe('escapeControls', () => {
  it('escapes exactly the unsafe code points of the BMP, as \\uXXXX', () => {
    const wrong: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      const expected = unsafe(code) ? `\\u${code.toString(16).padStart(4, '0')}` : char;
      if (escapeControls(char) !== expected) wrong.push(code.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('removeControls removes exactly the same code points, keeping new lines and tabs', () => {
    const wrong: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      if (removeControls(char) !== (unsafe(code) ? '' : char)) wrong.push(code.toString(16));
    }
    expect(wrong).toEqual([]);
    expect(removeControls('a\nb\tc 👍')).toBe('a\nb\tc 👍');
  });

  it('keeps new lines, tabs and astral characters, and is idempotent', () => {
    const text = 'a\nb\tc 👍 \u001b[2J';
    expect(escapeControls(text)).toBe('a\nb\tc 👍 \\u001b[2J');
    expect(escapeControls(escapeControls(text))).toBe(escapeControls(text));
  });

  it('takes a lone surrogate for unsafe (no character at all), and keeps every pair whole', () => {
    const wrong: string[] = [];
    for (let code = 0xd800; code <= 0xdfff; code++) {
      const lone = `a${String.fromCharCode(code)}b`;
      if (removeControls(lone) !== 'ab') wrong.push(`remove ${code.toString(16)}`);
      if (escapeControls(lone) !== `a\\u${code.toString(16)}b`) wrong.push(`escape ${code.toString(16)}`);
    }
    expect(wrong).toEqual([]);
    // A pair cut by a truncation elsewhere, and whole pairs (astral characters) beside it.
    expect(removeControls('👍\ud83d👍\udc4d')).toBe('👍👍');
    expect(escapeControls('𝕏\udfff')).toBe('𝕏\\udfff');
  });

  it('leaves JSON parsing back to the original text', () => {
    let all = '';
    for (const [from, to] of UNSAFE_RANGES) {
      for (let code = from; code <= to; code++) all += String.fromCharCode(code);
    }
    const value = { [all]: [`${all}\\"\n`] };
    expect(JSON.parse(escapeControls(JSON.stringify(value, null, 2)))).toEqual(value);
  });
});

describe('a directory name with U+061C, U+200E and U+200F', () => {
  const name = 'left\u061cmark\u200eright\u200fend';

  it('reaches the terminal escaped, through the one writer of the CLI', async () => {
    const written: string[] = [];
    const print = printer(
      {
        write(text: string, done: (error?: Error | null) => void) {
          written.push(text);
          done();
        },
      },
      new Set(),
    );
    await print(`${name}\n`);
    expect(written).toEqual(['left\\u061cmark\\u200eright\\u200fend\n']);
  });

  it('reaches a Discord message without them', () => {
    const msg = renderBotCard({ ...realBot(), shortDescription: name, library: name }, en, 'en-US');
    const sent = JSON.stringify(msg);
    expect(sent).toContain('leftmarkrightend');
    expect(sent).not.toMatch(/\\u061c|\\u200e|\\u200f|[\u061c\u200e\u200f]/i);
  });
});

describe('run() when the output cannot be written', () => {
  function failing(code: string) {
    return {
      write(_text: string, done: (error?: Error | null) => void) {
        done(Object.assign(new Error(`${code}: it failed, write`), { code }));
        return false;
      },
    };
  }
  function capture() {
    const chunks: string[] = [];
    return {
      chunks,
      write(text: string, done: (error?: Error | null) => void) {
        chunks.push(text);
        done();
        return true;
      },
    };
  }

  it('exits 8 and says so on stderr, or nothing for a closed pipe', async () => {
    const stderr = capture();
    expect(await run(['--help'], { stdout: failing('ENOSPC'), stderr, env: {} })).toBe(8);
    expect(stderr.chunks).toEqual(['directory: could not write the output: ENOSPC: it failed, write\n']);
    const quiet = capture();
    expect(await run(['--version'], { stdout: failing('EPIPE'), stderr: quiet, env: {} })).toBe(8);
    expect(quiet.chunks).toEqual([]);
  });

  it('keeps the exit code when stderr cannot be written either', async () => {
    expect(await run(['frobnicate'], { stdout: failing('EPIPE'), stderr: failing('EPIPE'), env: {} })).toBe(
      2,
    );
  });
});

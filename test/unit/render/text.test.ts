import { describe, expect, it } from 'vitest';
import {
  directoryMarkdown,
  httpUrl,
  neutralizeMentions,
  plainLabel,
  plainText,
  safeCode,
  safeLine,
  safeText,
  stripControl,
  truncate,
  userMention,
} from '../../../src/render/text.js';
import { BAD_URLS, BIDI_MARKS, CONTROLS, HOSTILE_NAME, LONE_SURROGATE, RLO } from './helpers.js';

describe('text helpers', () => {
  it('truncate keeps short text, cuts with an ellipsis and never splits a surrogate pair', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect(truncate('abc', 0)).toBe('');
    const emoji = `${'a'.repeat(8)}😀😀`;
    for (let max = 1; max < emoji.length; max++) {
      const cut = truncate(emoji, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(cut).not.toMatch(LONE_SURROGATE);
      expect(cut.endsWith('…')).toBe(true);
    }
    expect(truncate(`a${'😀'.repeat(3)}`, 3)).toBe('a…');
  });

  it('neutralizeMentions breaks every mention form', () => {
    const out = neutralizeMentions('@everyone @here @EVERYONE <@123> <@!123> <@&123> <#123>');
    expect(out).not.toMatch(/@(everyone|here)/i);
    expect(out).not.toMatch(/<[@#]/);
  });

  it('stripControl removes C0/C1 controls and bidi overrides, keeps newlines and tabs', () => {
    expect(stripControl(`a${CONTROLS}b${RLO}c\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069d\te\nf`)).toBe(
      'a[31mbcd\te\nf',
    );
    expect(stripControl('a\r\nb\rc\u2028d')).toBe('a\nb\nc\nd');
    expect(stripControl(`a${BIDI_MARKS}b\ufeffc`)).toBe('abc');
  });

  it('lets no bidi mark through any helper that puts directory text in a message', () => {
    const text = `x${BIDI_MARKS}y`;
    for (const out of [
      safeText(text, 100),
      safeLine(text, 100),
      safeCode(text, 100),
      plainText(text, 100),
      plainLabel(text),
      directoryMarkdown(text, 100),
      userMention(text),
    ]) {
      expect(out).toContain('xy');
      expect(out).not.toMatch(/[\u061c\u200e\u200f]/);
    }
  });

  it('safeText escapes markdown, masked links, headings, lists and quotes', () => {
    const out = safeText(HOSTILE_NAME, 1000);
    expect(out).toContain('\\*\\*bold\\*\\*');
    expect(out).toContain('\\[x\\](javascript:alert(1))');
    expect(out).not.toMatch(/@everyone/);
    expect(out).not.toMatch(/<@&/);
    const blocks = safeText(
      '# head\n> quote\n>>> all\n-# small\n- item\n1. one\n`code` ||spoiler|| ~~s~~ __u__',
      1000,
    );
    expect(blocks).toBe(
      '\\# head\n\\> quote\n\\>>> all\n\\-# small\n\\- item\n1\\. one\n\\`code\\` \\|\\|spoiler\\|\\| \\~\\~s\\~\\~ \\_\\_u\\_\\_',
    );
    expect(safeText('a\\b', 10)).toBe('a\\\\b');
    expect(safeText(null, 10)).toBe('');
    expect(safeText(undefined, 10)).toBe('');
  });

  it('safeLine folds whitespace; plainText and plainLabel only cut and break mentions', () => {
    expect(safeLine('  a \n\n b\t c ', 100)).toBe('a b c');
    expect(safeLine('x'.repeat(300), 256)).toHaveLength(256);
    expect(plainText('@here *x*\n', 100)).toBe('@\u200bhere *x*');
    expect(plainLabel(` ${'y'.repeat(100)} `)).toHaveLength(80);
  });

  it('safeCode shows text verbatim in a code span, with backticks replaced', () => {
    expect(safeCode('*', 32)).toBe('`*`');
    expect(safeCode('a_b', 32)).toBe('`a_b`');
    expect(safeCode('a`b', 32)).toBe('`aˋb`');
    expect(safeCode('   ', 32)).toBe('');
    expect(safeCode(null, 32)).toBe('');
    expect(safeCode('x'.repeat(100), 32)).toHaveLength(32);
    expect(safeCode('@everyone', 32)).not.toContain('@everyone');
  });

  it('httpUrl admits only http(s)', () => {
    expect(httpUrl('https://kerdoku.top')).toBe('https://kerdoku.top/');
    expect(httpUrl('http://example.com/a?b=1')).toBe('http://example.com/a?b=1');
    expect(httpUrl('HTTPS://EXAMPLE.COM')).toBe('https://example.com/');
    for (const bad of [...BAD_URLS, 'example.com', '//example.com', '', null, undefined]) {
      expect(httpUrl(bad), String(bad)).toBeNull();
    }
    expect(httpUrl(`https://example.com/${'a'.repeat(600)}`)).toBeNull();
  });

  it('userMention mentions only IDs', () => {
    expect(userMention('585766846268047370')).toBe('<@585766846268047370>');
    expect(userMention('@everyone')).toBe('@\u200beveryone');
    expect(userMention('<@&123>')).not.toContain('<@&');
    expect(userMention(null)).toBe('');
  });

  it('directoryMarkdown keeps markdown, turns shortcodes into emoji and breaks mentions', () => {
    expect(directoryMarkdown(':white_check_mark: **2 UP**!', 100)).toBe('✅ **2 UP**!');
    expect(directoryMarkdown(':unknown::x: 10:30:00', 100)).toBe(':unknown:❌ 10:30:00');
    expect(directoryMarkdown('@everyone <@&1> <@2>', 100)).not.toMatch(/@everyone|<@/);
    expect(directoryMarkdown(`a${RLO}b`, 100)).toBe('ab');
  });
});

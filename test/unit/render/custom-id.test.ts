import { describe, expect, it } from 'vitest';
import {
  type CommentsState,
  commentsCustomId,
  customIdPrefix,
  decodeComments,
  decodeRemind,
  encodeComments,
  encodeRemind,
  isCommentsId,
  isRemindId,
} from '../../../src/render/custom-id.js';

describe('comments custom_id', () => {
  const ID = '724663360934772797';

  it('round-trips every mode and kind', () => {
    for (const mode of ['open', 'page'] as const) {
      for (const kind of ['bot', 'server', 'profile'] as const) {
        for (const page of [0, 1, 42, 9999]) {
          const state: CommentsState = { mode, kind, id: ID, page };
          const encoded = encodeComments(state);
          expect(encoded.length).toBeLessThanOrEqual(100);
          expect(isCommentsId(encoded)).toBe(true);
          expect(decodeComments(encoded)).toEqual(state);
          expect(commentsCustomId(state)).toBe(encoded);
        }
      }
    }
    expect(encodeComments({ mode: 'page', kind: 'server', id: ID, page: 3 })).toBe(`comments:p:s:${ID}:3`);
    expect(decodeComments(`comments:o:p:${'9'.repeat(20)}:0`)?.id).toBe('9'.repeat(20));
  });

  it('rejects malformed IDs', () => {
    for (const bad of [
      '',
      'comments',
      `comments:p:b:${ID}`,
      `comments:p:b:${ID}:1:2`,
      `comments:p:b:${ID}:1:`,
      `comments:p:b:${ID}:${'1'.repeat(100)}`,
      `comments:p:b:${'1'.repeat(90)}:1`,
      `comments:x:b:${ID}:1`,
      `comments:p:x:${ID}:1`,
      `comments:p:bot:${ID}:1`,
      `comment:p:b:${ID}:1`,
      `other:p:b:${ID}:1`,
      `comments:p:b:kerdoku:1`,
      `comments:p:b:${ID}:one`,
      `comments:p:b:${ID}:-1`,
      `comments:p:b:${ID}:1.5`,
      `comments:p:b:${ID}:01`,
      `comments:p:b:${ID}:10000`,
      `comments:p:b:1234567890123456:1`,
      `comments:p:b:${ID}0000:1`,
      ` comments:p:b:${ID}:1`,
      `comments:p:b:${ID}:1\n`,
      `comments:p:b:${ID}:1 `,
      `COMMENTS:P:B:${ID}:1`,
    ]) {
      expect(decodeComments(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(isCommentsId('other:1')).toBe(false);
  });

  it('commentsCustomId refuses states that would not decode back', () => {
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: -1 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: 10_000 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: ID, page: 1.5 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: 'kerdoku', page: 0 })).toBeNull();
    expect(commentsCustomId({ mode: 'page', kind: 'bot', id: 'x'.repeat(200), page: 0 })).toBeNull();
  });
});

describe('remind custom_id', () => {
  it('carries the next up in whole seconds, rounded up, and reads it back', () => {
    const at = Date.UTC(2026, 10, 25, 16, 0, 0, 1);
    const id = encodeRemind(at);
    expect(id).toBe(`remind:${Math.ceil(at / 1000)}`);
    expect(isRemindId(id)).toBe(true);
    expect(isCommentsId(id)).toBe(false);
    expect(decodeRemind(id)).toBe(Math.ceil(at / 1000) * 1000);
    expect(customIdPrefix(id)).toBe('remind');
  });

  it('rejects malformed IDs', () => {
    for (const bad of [
      '',
      'remind',
      'remind:',
      'remind:0',
      'remind:01764086400',
      'remind:1764086400:1',
      'remind:-1',
      'remind:1e9',
      'remind:123456789012',
      'comments:1764086400',
    ]) {
      expect(decodeRemind(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(isRemindId('comments:o:b:1:0')).toBe(false);
  });
});

describe('customIdPrefix', () => {
  it('names the button by what its custom_id starts with', () => {
    expect(customIdPrefix('comments:o:b:724663360934772797:0')).toBe('comments');
    expect(customIdPrefix('odd')).toBe('odd');
    expect(customIdPrefix('')).toBe('');
  });
});

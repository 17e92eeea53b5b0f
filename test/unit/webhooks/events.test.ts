/**
 * What the directory's webhook may send, checked before it steers anything: each type's shape as
 * the published material gives it, what identifies an event (so a repeat is recognized), and what
 * is answered but not kept (a bot's events, a type the directory may add).
 */
import { describe, expect, it } from 'vitest';
import { MAX_COMMENT_TEXT, parseDelivery, TEST_WINDOW_MS } from '../../../src/features/webhooks/events.js';

const GUILD = '722424773233213460';
const USER = '310000000000000001';
const NOW = Date.UTC(2026, 10, 25, 12);

describe("the directory's webhook deliveries", () => {
  it('reads a new comment as the directory sends it, and names it by type, member and time', () => {
    const body = {
      type: 'new_server_comment',
      data: {
        user: USER,
        comment: { vote: { old: null, new: 1 }, old: null, new: 'Хороший сервер' },
        at: NOW - 5,
      },
    };
    expect(parseDelivery(body, GUILD, NOW)).toEqual({
      kind: 'event',
      type: 'new_server_comment',
      id: `${GUILD}:new-comment:${USER}:${NOW - 5}`,
      event: {
        kind: 'comment',
        change: 'new',
        userId: USER,
        at: NOW - 5,
        vote: { old: null, new: 1 },
        text: { old: null, new: 'Хороший сервер' },
        reason: null,
      },
    });
    // The same comment delivered later is the same event.
    expect(parseDelivery(body, GUILD, NOW + 60_000)).toMatchObject({
      id: `${GUILD}:new-comment:${USER}:${NOW - 5}`,
    });
  });

  it('reads an edit and a deletion with its reason; a deletion without one says so', () => {
    const edit = parseDelivery(
      {
        type: 'edit_server_comment',
        data: { user: USER, comment: { vote: { old: 1, new: -1 }, old: 'a', new: 'b' }, at: NOW },
      },
      GUILD,
      NOW,
    );
    expect(edit).toMatchObject({
      event: { change: 'edit', vote: { old: 1, new: -1 }, text: { old: 'a', new: 'b' } },
    });
    const deletion = parseDelivery(
      {
        type: 'delete_server_comment',
        data: { user: USER, comment: { old: 'a', new: null }, reason: 'moderation', at: NOW },
      },
      GUILD,
      NOW,
    );
    expect(deletion).toMatchObject({ event: { change: 'delete', reason: 'moderation' } });
    const noReason = parseDelivery(
      { type: 'delete_server_comment', data: { user: USER, at: NOW } },
      GUILD,
      NOW,
    );
    expect(noReason).toMatchObject({
      event: { change: 'delete', reason: null, text: { old: null, new: null } },
    });
  });

  it('reads a bump with or without its later bonus', () => {
    expect(
      parseDelivery({ type: 'new_server_bump', data: { user: USER, at: NOW } }, GUILD, NOW),
    ).toMatchObject({
      id: `${GUILD}:bump:${USER}:${NOW}`,
      event: { kind: 'bump', userId: USER, at: NOW, bonus: null },
    });
    expect(
      parseDelivery(
        {
          type: 'new_server_bump',
          data: { user: USER, at: NOW },
          bonus: { status: true, expiresAt: NOW + 1 },
        },
        GUILD,
        NOW,
      ),
    ).toMatchObject({ event: { bonus: { status: true, expiresAt: NOW + 1 } } });
  });

  it('takes the test button pressed twice at once as one event, and again later as another', () => {
    const test = { type: 'test_webhook_message', data: { hello: true, world: true } };
    const at = Math.floor(NOW / TEST_WINDOW_MS) * TEST_WINDOW_MS;
    const first = parseDelivery(test, GUILD, at + 10);
    expect(first).toMatchObject({ kind: 'event', event: { kind: 'test' } });
    expect(parseDelivery(test, GUILD, at + TEST_WINDOW_MS - 1)).toMatchObject({
      id: (first as { id: string }).id,
    });
    expect(parseDelivery(test, GUILD, at + TEST_WINDOW_MS)).not.toMatchObject({
      id: (first as { id: string }).id,
    });
  });

  it("answers a bot's events and a type it does not know without keeping them", () => {
    expect(parseDelivery({ type: 'new_bot_bump', data: { user: USER, at: NOW } }, GUILD, NOW)).toEqual({
      kind: 'ignored',
      reason: 'bot',
      type: 'new_bot_bump',
    });
    expect(parseDelivery({ type: 'new_server_rating', data: {} }, GUILD, NOW)).toEqual({
      kind: 'ignored',
      reason: 'unknown',
      type: 'new_server_rating',
    });
    // A type that is not a plain word is not echoed into the logs.
    expect(parseDelivery({ type: '<@&1> \n', data: {} }, GUILD, NOW)).toMatchObject({ type: 'unknown' });
  });

  it('refuses what does not fit: ids that are not ids, votes out of range, times in the future or before Discord', () => {
    const comment = (data: Record<string, unknown>) =>
      parseDelivery({ type: 'new_server_comment', data: { user: USER, at: NOW, ...data } }, GUILD, NOW);
    for (const bad of [
      comment({ user: '<@310000000000000001>' }),
      comment({ user: 3_100_000_000_000 }),
      comment({ comment: { vote: { old: null, new: 5 } } }),
      comment({ comment: { new: 42 } }),
      comment({ at: NOW + 11 * 60_000 }),
      comment({ at: 1_000 }),
      comment({ at: '1700000000000' }),
      comment({ reason: 'because' }),
      parseDelivery({ type: 'new_server_bump', data: { at: NOW } }, GUILD, NOW),
      parseDelivery({ data: {} }, GUILD, NOW),
      parseDelivery([], GUILD, NOW),
      parseDelivery(null, GUILD, NOW),
      parseDelivery('new_server_bump', GUILD, NOW),
      parseDelivery({ type: 'x'.repeat(65) }, GUILD, NOW),
    ]) {
      expect(bad).toEqual({ kind: 'invalid' });
    }
    // Ten minutes ahead: the two clocks may differ that much.
    expect(comment({ at: NOW + 9 * 60_000 })).toMatchObject({ kind: 'event' });
  });

  it('cuts a comment text to what is kept', () => {
    const parsed = parseDelivery(
      { type: 'new_server_comment', data: { user: USER, at: NOW, comment: { new: 'я'.repeat(50_000) } } },
      GUILD,
      NOW,
    );
    expect(parsed.kind === 'event' && parsed.event.kind === 'comment' && parsed.event.text.new?.length).toBe(
      MAX_COMMENT_TEXT,
    );
  });
});

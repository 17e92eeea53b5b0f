import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  KNOWN_NOTIFY_TYPES,
  looksLikeNotifyWebhook,
  type NotifyEvent,
  notifyEventKey,
  parseNotifyFrame,
  parseNotifyWebhook,
} from '../../src/directory/v3/notify.js';

const DIR = join(import.meta.dirname, '../fixtures/directory-v3');
const read = (name: string): string => readFileSync(join(DIR, name), 'utf8');
const json = (name: string): Record<string, unknown> => JSON.parse(read(name)) as Record<string, unknown>;

/** Well after every fixture's `happened` (2023). */
const NOW = Date.UTC(2026, 0, 1);
const RESOURCE = '722424773233213460';
const USER = '511887819153866762';

function notifyFrame(data: Record<string, unknown>): string {
  return JSON.stringify({ event: 'notify', data });
}

function notify(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'comment_added',
    payload: { content: 'nice bot', rating: 4 },
    affected: RESOURCE,
    user: USER,
    happened: 1688747542930,
    ...overrides,
  };
}

function eventOf(text: string, now = NOW): NotifyEvent {
  const frame = parseNotifyFrame(text, now);
  if (frame.kind !== 'notify') throw new Error(`expected notify, got ${JSON.stringify(frame)}`);
  return frame.event;
}

describe('published and constructed WebSocket fixtures', () => {
  const notifyFixtures = readdirSync(DIR).filter((f) => /^ws-notify.*\.json$/.test(f));

  it('has the four constructed per-type fixtures and the published one', () => {
    expect(notifyFixtures).toHaveLength(5);
  });

  it.each(notifyFixtures)('%s parses to a notify event', (name) => {
    const event = eventOf(read(name));
    expect(event.affected).toBe(RESOURCE);
    expect(event.user).toBe(USER);
    expect(event.happened).toBe(1688747542930);
    expect(KNOWN_NOTIFY_TYPES).toContain(event.type);
  });

  it('normalizes each published payload', () => {
    const payloads = json('notify-payloads.json');
    expect(eventOf(read('ws-notify-up_added.constructed.json')).payload).toEqual({
      upCount: 1,
      content: null,
      rating: null,
    });
    expect(eventOf(read('ws-notify-comment_added.constructed.json')).payload).toEqual({
      upCount: null,
      content: 'review content',
      rating: 5,
    });
    expect(eventOf(read('ws-notify.json')).payload).toEqual({ upCount: null, content: null, rating: null });
    for (const [type, payload] of Object.entries(payloads)) {
      const event = eventOf(notifyFrame(notify({ type, payload })));
      expect(event.type).toBe(type);
      const p = payload as Record<string, unknown>;
      expect(event.payload).toEqual({
        upCount: p.upCount ?? null,
        content: p.content ?? null,
        rating: p.rating ?? null,
      });
    }
  });

  it('hello, pong and error', () => {
    expect(parseNotifyFrame(read('ws-hello.json'), NOW)).toEqual({ kind: 'hello', id: 'connection id' });
    expect(parseNotifyFrame(read('ws-pong.json'), NOW)).toEqual({ kind: 'pong' });
    expect(parseNotifyFrame(read('ws-error.constructed.json'), NOW)).toEqual({
      kind: 'error',
      code: 14,
      message: 'TokenInvalid',
    });
  });

  it('frames the client sends, or that are unknown, are ignored', () => {
    expect(parseNotifyFrame(read('ws-ping.json'), NOW)).toEqual({ kind: 'ignored', reason: 'unknown-event' });
    expect(parseNotifyFrame(read('ws-auth.json'), NOW)).toEqual({ kind: 'ignored', reason: 'unknown-event' });
    expect(parseNotifyFrame('{"event":"resume","data":{}}', NOW)).toEqual({
      kind: 'ignored',
      reason: 'unknown-event',
    });
  });

  it('a notify type not listed yet passes (BotiCord may add some)', () => {
    expect(eventOf(notifyFrame(notify({ type: 'none' }))).type).toBe('none');
    expect(eventOf(notifyFrame(notify({ type: 'bot_approved' }))).type).toBe('bot_approved');
  });
});

describe('hostile frames', () => {
  it('never throws, whatever the text', () => {
    const inputs: unknown[] = [
      '',
      '{',
      'null',
      '[]',
      '[{"event":"notify"}]',
      '"notify"',
      '42',
      '1e999999',
      'true',
      '{"event":null}',
      '{"event":1}',
      '{"event":"hello"}',
      '{"event":"hello","data":[]}',
      '{"event":"hello","data":{"id":5}}',
      '{"event":"notify","data":null}',
      '{"event":"notify","data":"x"}',
      '{"event":"error","data":"x"}',
      '{"__proto__":{"event":"notify"}}',
      '{"constructor":{"prototype":{"x":1}},"event":"pong"}',
      `{"event":"notify","data":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      '\u0000\uFFFF\uD800',
      'x'.repeat(1024 * 1024),
      undefined,
      null,
      42,
      {},
    ];
    for (const input of inputs) {
      const frame = parseNotifyFrame(input as string, NOW);
      expect(typeof frame.kind).toBe('string');
    }
    expect(parseNotifyFrame('{', NOW)).toEqual({ kind: 'invalid', reason: 'not JSON' });
    expect(parseNotifyFrame('[]', NOW).kind).toBe('invalid');
    expect(parseNotifyFrame('{"event":"hello"}', NOW).kind).toBe('invalid');
    expect(parseNotifyFrame('{"__proto__":{"event":"notify"}}', NOW).kind).toBe('invalid');
    expect(parseNotifyFrame(null as unknown as string, NOW).kind).toBe('invalid');
  });

  it('a 1 MB review is cut to 4000 characters; a 1 MB frame of junk is refused', () => {
    const content = 'a'.repeat(1024 * 1024);
    const event = eventOf(notifyFrame(notify({ payload: { content, rating: 5 } })));
    expect(event.payload.content).toHaveLength(4000);
    expect(parseNotifyFrame('x'.repeat(1024 * 1024), NOW).kind).toBe('invalid');
  });

  it('cutting never leaves half a surrogate pair', () => {
    const content = `${'a'.repeat(3999)}😀tail`;
    const event = eventOf(notifyFrame(notify({ payload: { content } })));
    expect(event.payload.content).toBe('a'.repeat(3999));
  });

  it.each([
    ['affected not a snowflake', { affected: '123' }],
    ['affected as a number (JSON numbers lose digits)', { affected: 722424773233213 }],
    ['affected with text', { affected: '722424773233213460 <@1>' }],
    ['user not a snowflake', { user: '../../admin' }],
    ['user too long', { user: '1'.repeat(21) }],
    ['user missing', { user: undefined }],
    ['type uppercase', { type: 'UP_ADDED' }],
    ['type number (RU docs)', { type: 1 }],
    ['type too long', { type: 'a'.repeat(65) }],
    ['type with a path', { type: 'up/../x' }],
    ['happened far future', { happened: NOW + 11 * 60_000 }],
    ['happened before Discord', { happened: 1_000 }],
    ['happened as a string', { happened: '1688747542930' }],
    ['happened fractional', { happened: 1688747542930.5 }],
    ['happened huge', { happened: 1e300 }],
  ])('refuses %s', (_name, overrides) => {
    const frame = parseNotifyFrame(notifyFrame(notify(overrides)), NOW);
    expect(frame.kind).toBe('invalid');
  });

  it('happened a little ahead of our clock passes', () => {
    expect(eventOf(notifyFrame(notify({ happened: NOW + 5 * 60_000 }))).happened).toBe(NOW + 5 * 60_000);
  });

  it('huge numbers in JSON do not pass as happened', () => {
    const text =
      '{"event":"notify","data":{"type":"up_added","affected":"722424773233213460","user":"511887819153866762","happened":1e400}}';
    expect(parseNotifyFrame(text, NOW).kind).toBe('invalid');
  });

  it('a payload of the wrong kind becomes nulls; odd fields and prototype keys are left out', () => {
    for (const payload of [null, 'x', 5, [], [1, 2], { upCount: '5' }, { upCount: 0 }, { upCount: 1001 }]) {
      expect(eventOf(notifyFrame(notify({ payload }))).payload).toEqual({
        upCount: null,
        content: null,
        rating: null,
      });
    }
    expect(
      eventOf(notifyFrame(notify({ payload: { rating: 6, upCount: 2.5, content: 7 } }))).payload,
    ).toEqual({
      upCount: null,
      content: null,
      rating: null,
    });
    const text =
      '{"event":"notify","data":{"__proto__":{"polluted":1},"type":"up_added","affected":"722424773233213460",' +
      '"user":"511887819153866762","happened":1688747542930,"extra":"x",' +
      '"payload":{"__proto__":{"upCount":3},"constructor":{"x":1},"upCount":2,"html":"<b>"}}}';
    const event = eventOf(text);
    expect(Object.keys(event).sort()).toEqual(['affected', 'happened', 'payload', 'type', 'user']);
    expect(Object.keys(event.payload).sort()).toEqual(['content', 'rating', 'upCount']);
    expect(event.payload.upCount).toBe(2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
  });

  it('a payload inherited from the prototype is not read', () => {
    const text =
      '{"event":"notify","data":{"type":"up_added","affected":"722424773233213460",' +
      '"user":"511887819153866762","happened":1688747542930,"payload":{"__proto__":{"upCount":3}}}}';
    expect(eventOf(text).payload.upCount).toBeNull();
  });

  it('mentions are kept as text: escaping is the renderer’s job', () => {
    const content = '@everyone @here <@&123456789012345678> **bold**';
    expect(eventOf(notifyFrame(notify({ payload: { content, rating: 1 } }))).payload.content).toBe(content);
  });

  it('an error frame’s message is cut to 200 characters; odd codes become null', () => {
    const frame = parseNotifyFrame(
      JSON.stringify({ event: 'error', data: { code: 'x', message: 'm'.repeat(5000) } }),
      NOW,
    );
    expect(frame).toEqual({ kind: 'error', code: null, message: 'm'.repeat(200) });
    expect(parseNotifyFrame('{"event":"error"}', NOW)).toEqual({ kind: 'error', code: null, message: null });
  });

  it('a hello id is cut', () => {
    const frame = parseNotifyFrame(JSON.stringify({ event: 'hello', data: { id: 'i'.repeat(10_000) } }), NOW);
    expect(frame.kind === 'hello' && frame.id.length).toBe(128);
  });
});

describe('webhook bodies', () => {
  it('the constructed up_added body parses, with id as affected', () => {
    const result = parseNotifyWebhook(json('webhook-up_added.constructed.json'), NOW);
    expect(result).toEqual({
      kind: 'notify',
      event: {
        type: 'up_added',
        affected: RESOURCE,
        user: USER,
        happened: 1688322825141,
        payload: { upCount: 1, content: null, rating: null },
      },
    });
  });

  it('webhookSettings (the owner’s token) and unknown fields never reach the result', () => {
    const body = { ...json('webhook-up_added.constructed.json'), extra: { token: 'x' } };
    const result = parseNotifyWebhook(body, NOW);
    const text = JSON.stringify(result);
    expect(text).not.toContain('CONSTRUCTED-owner-api-token');
    expect(text).not.toContain('webhookSettings');
    expect(text).not.toContain('extra');
    expect(text).not.toContain('example.invalid');
  });

  it('a body with a token but bad fields is refused without echoing it', () => {
    const body = { ...json('webhook-up_added.constructed.json'), user: 'CONSTRUCTED-owner-api-token' };
    const result = parseNotifyWebhook(body, NOW);
    expect(result.kind).toBe('invalid');
    expect(JSON.stringify(result)).not.toContain('CONSTRUCTED-owner-api-token');
  });

  it('the published placeholder body is refused (its ids are placeholders), without throwing', () => {
    expect(parseNotifyWebhook(json('webhook-body.json'), NOW).kind).toBe('invalid');
  });

  it('each published payload, as a webhook body', () => {
    for (const [type, payload] of Object.entries(json('notify-payloads.json'))) {
      const result = parseNotifyWebhook(
        { type, payload, id: RESOURCE, user: USER, happened: 1688322825141, webhookSettings: {} },
        NOW,
      );
      expect(result.kind).toBe('notify');
    }
  });

  it('hostile bodies are refused, never thrown', () => {
    for (const body of [null, undefined, 'x', 1, [], [json('webhook-up_added.constructed.json')], {}]) {
      expect(parseNotifyWebhook(body, NOW).kind).toBe('invalid');
    }
    const future = { ...json('webhook-up_added.constructed.json'), happened: NOW + 3_600_000 };
    expect(parseNotifyWebhook(future, NOW)).toEqual({ kind: 'invalid', reason: 'happened in the future' });
    const wsShape = { ...json('webhook-up_added.constructed.json'), id: undefined, affected: RESOURCE };
    expect(parseNotifyWebhook(wsShape, NOW).kind).toBe('invalid');
  });

  it('looksLikeNotifyWebhook tells v3 from v2', () => {
    expect(looksLikeNotifyWebhook(json('webhook-up_added.constructed.json'))).toBe(true);
    expect(looksLikeNotifyWebhook(json('webhook-body.json'))).toBe(true);
    expect(looksLikeNotifyWebhook({ type: 'new_server_bump', data: { user: USER, at: 1 } })).toBe(false);
    expect(looksLikeNotifyWebhook({ happened: 1, payload: {}, data: {} })).toBe(false);
    expect(looksLikeNotifyWebhook({ happened: 1 })).toBe(false);
    expect(looksLikeNotifyWebhook(JSON.parse('{"__proto__":{"happened":1,"id":"1"}}'))).toBe(false);
    for (const body of [null, undefined, 'x', [], 5]) expect(looksLikeNotifyWebhook(body)).toBe(false);
  });
});

describe('notifyEventKey', () => {
  it('is the same for the WebSocket frame and the webhook body of one event', () => {
    const ws = eventOf(notifyFrame(notify({ type: 'up_added', happened: 1688322825141 })));
    const hook = parseNotifyWebhook(json('webhook-up_added.constructed.json'), NOW);
    expect(hook.kind).toBe('notify');
    if (hook.kind !== 'notify') return;
    expect(notifyEventKey(ws)).toBe(notifyEventKey(hook.event));
    expect(notifyEventKey(ws)).toBe(`up_added:${RESOURCE}:${USER}:1688322825141`);
  });
});

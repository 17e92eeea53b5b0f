/** Assertions shared by the end-to-end files (vitest's expect over the harness's records). */

import type { APIEmbed } from 'discord.js';
import { expect, it } from 'vitest';
import { SETUP_BUTTON_ID } from '../../src/features/setup/welcome.js';
import { FOLLOW_UP_PATH, type ViewedMessage } from '../discord/index.js';
import {
  type Answer,
  EPHEMERAL,
  embedOf,
  type Harness,
  isEphemeral,
  mentionProblems,
  privateMessage,
  publicMessage,
  secretLeaks,
  sentMessages,
} from './harness.js';

const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;

function callbackOf(answer: Answer): { type?: number; data?: { flags?: number } } {
  const callback = answer.requests.find((r) => r.method === 'POST' && CALLBACK.test(r.path));
  expect(callback, 'the interaction was acknowledged').toBeDefined();
  return (callback?.body ?? {}) as { type?: number; data?: { flags?: number } };
}

/** A command answered in public: deferred publicly, the deferral edited, nothing else left. */
export function expectPublic(answer: Answer): { message: ViewedMessage; embed: APIEmbed } {
  const callback = callbackOf(answer);
  expect(callback.type).toBe(5);
  expect((callback.data?.flags ?? 0) & EPHEMERAL).toBe(0);
  expect(answer.view.followUps).toEqual([]);
  const message = publicMessage(answer);
  expect(message.id).toBe(answer.view.original?.id);
  return { message, embed: embedOf(message) };
}

/**
 * A command answered privately after a public deferral: the public "thinking…" placeholder is
 * deleted first, then the answer goes as an ephemeral follow-up; no public message is left.
 */
export function expectPrivate(answer: Answer): { message: ViewedMessage; embed: APIEmbed } {
  const callback = callbackOf(answer);
  expect(callback.type).toBe(5);
  expect(answer.view.original?.deleted, 'the public placeholder was deleted').toBe(true);
  const deleteAt = answer.requests.findIndex(
    (r) => r.method === 'DELETE' && r.path.endsWith('/messages/@original'),
  );
  const followUpAt = answer.requests.findIndex((r) => r.method === 'POST' && FOLLOW_UP_PATH.test(r.path));
  expect(deleteAt).toBeGreaterThanOrEqual(0);
  expect(followUpAt).toBeGreaterThan(deleteAt);
  const followUp = answer.requests[followUpAt]?.body as { flags?: number } | undefined;
  expect((followUp?.flags ?? 0) & EPHEMERAL).toBe(EPHEMERAL);
  expect(answer.view.followUps).toHaveLength(1);
  const message = privateMessage(answer);
  expect(isEphemeral(message)).toBe(true);
  return { message, embed: embedOf(message) };
}

/** A command deferred privately (its every answer private): the private deferral edited in place. */
export function expectPrivatelyDeferred(answer: Answer): { message: ViewedMessage; embed: APIEmbed } {
  const callback = callbackOf(answer);
  expect(callback.type).toBe(5);
  expect((callback.data?.flags ?? 0) & EPHEMERAL).toBe(EPHEMERAL);
  expect(answer.view.followUps).toEqual([]);
  const message = privateMessage(answer);
  expect(message.id).toBe(answer.view.original?.id);
  return { message, embed: embedOf(message) };
}

/**
 * The last test of every file: no token in any log line or any body sent to Discord, no
 * unhandled rejection, and every message the bot sent can ping nobody.
 */
export function itLeavesNoTrace(h: () => Harness, options: { sendsMessages?: boolean } = {}): void {
  it('leaks no token, pings nobody and leaves no unhandled rejection', () => {
    const harness = h();
    expect(secretLeaks(harness)).toEqual([]);
    expect(harness.unhandled).toEqual([]);
    expect(harness.stuckStops).toEqual([]);
    expect(harness.lines.filter((l) => /unhandled/i.test(l))).toEqual([]);
    // Every answer goes through the interaction: the bot posts into a channel by itself only its
    // welcome on joining a server (features/setup/welcome.ts), which pings no one (checked below).
    const channelPosts = harness.discord.requests.filter(
      (r) =>
        r.method !== 'GET' &&
        /^\/channels\/\d+\/messages/.test(r.path) &&
        !JSON.stringify(r.body ?? '').includes(`"custom_id":"${SETUP_BUTTON_ID}"`),
    );
    expect(channelPosts.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const messages = sentMessages(harness.discord.requests);
    if (options.sendsMessages !== false) expect(messages.length).toBeGreaterThan(0);
    const problems = messages.flatMap((m) => mentionProblems(m));
    expect(problems).toEqual([]);
  });
}

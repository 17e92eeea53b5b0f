/**
 * What the renderer tests share: the published samples as records, hostile strings, and checks
 * on a finished message that do not trust the renderer's own limits (every Discord limit, no
 * ping).
 */
import { type APIButtonComponent, type APIEmbed, ButtonStyle, ComponentType } from 'discord.js';
import { expect } from 'vitest';
import { botSchema, profileSchema, serverSchema } from '../../../src/directory/schemas.js';
import type { DirectoryBot, DirectoryProfile, DirectoryServer } from '../../../src/directory/types.js';
import { translator } from '../../../src/i18n/index.js';
import { embedLength } from '../../../src/render/limits.js';
import type { RenderedMessage } from '../../../src/render/message.js';
import { directorySample } from '../../support/samples.js';

export const en = translator('en-US');
export const ru = translator('ru');

export const realBot = (): DirectoryBot => botSchema.parse(directorySample('bot.json'));
export const realServer = (): DirectoryServer => serverSchema.parse(directorySample('server.json'));
export const realProfile = (): DirectoryProfile => profileSchema.parse(directorySample('profile.json'));

/** Discord shows numbers grouped with a no-break space in Russian; compare with plain spaces. */
export const spaces = (s: string): string => s.replace(/[\u00a0\u202f]/g, ' ');

export const HOSTILE_NAME = '@everyone <@&123> **bold** [x](javascript:alert(1))';
export const RLO = '\u202e';
/** Bidi marks that are not embeddings or overrides: the Arabic letter mark, LRM and RLM. */
export const BIDI_MARKS = '\u061c\u200e\u200f';
export const CONTROLS = '\u0000\u0007\u001b[31m\u007f\u0085';
export const BAD_URLS = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'ftp://example.com/file',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'mailto:a@example.com',
  'steam://open/games',
];

// ---------------------------------------------------------------------------------------------
// Independent checks on what a renderer produced.

export function embedTotal(embed: APIEmbed): number {
  let n = 0;
  n += embed.title?.length ?? 0;
  n += embed.description?.length ?? 0;
  n += embed.footer?.text.length ?? 0;
  n += embed.author?.name.length ?? 0;
  for (const f of embed.fields ?? []) n += f.name.length + f.value.length;
  return n;
}

function labelOf(b: APIButtonComponent): string {
  return 'label' in b ? (b.label ?? '') : '';
}

function buttonsOf(msg: RenderedMessage): APIButtonComponent[] {
  return msg.components.flatMap((row) => row.components);
}

export function linkButtons(msg: RenderedMessage): Array<{ label: string; url: string }> {
  return buttonsOf(msg).flatMap((b) =>
    b.style === ButtonStyle.Link ? [{ label: labelOf(b), url: b.url }] : [],
  );
}

export function customIdButtons(
  msg: RenderedMessage,
): Array<{ label: string; customId: string; disabled: boolean }> {
  return buttonsOf(msg).flatMap((b) =>
    'custom_id' in b ? [{ label: labelOf(b), customId: b.custom_id, disabled: b.disabled ?? false }] : [],
  );
}

function texts(msg: RenderedMessage): string[] {
  const out: string[] = [];
  for (const e of msg.embeds) {
    if (e.title !== undefined) out.push(e.title);
    if (e.description !== undefined) out.push(e.description);
    if (e.footer) out.push(e.footer.text);
    if (e.author) out.push(e.author.name);
    for (const f of e.fields ?? []) out.push(f.name, f.value);
  }
  for (const b of buttonsOf(msg)) out.push(labelOf(b));
  return out;
}

export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

/** Every Discord limit the issue names, checked on the finished message. */
export function expectWithinLimits(msg: RenderedMessage): void {
  expect(msg.embeds.length).toBeLessThanOrEqual(10);
  for (const e of msg.embeds) {
    expect(e.title?.length ?? 0).toBeLessThanOrEqual(256);
    expect(e.description?.length ?? 0).toBeLessThanOrEqual(4096);
    expect(e.footer?.text.length ?? 0).toBeLessThanOrEqual(2048);
    expect(e.fields?.length ?? 0).toBeLessThanOrEqual(25);
    for (const f of e.fields ?? []) {
      expect(f.name.length).toBeGreaterThan(0);
      expect(f.name.length).toBeLessThanOrEqual(256);
      expect(f.value.trim().length).toBeGreaterThan(0);
      expect(f.value.length).toBeLessThanOrEqual(1024);
    }
    expect(embedTotal(e)).toBeLessThanOrEqual(6000);
    expect(embedLength(e)).toBe(embedTotal(e));
    if (e.thumbnail) expect(e.thumbnail.url).toMatch(/^https?:\/\//);
  }
  expect(msg.components.length).toBeLessThanOrEqual(5);
  const ids = new Set<string>();
  for (const row of msg.components) {
    expect(row.type).toBe(ComponentType.ActionRow);
    expect(row.components.length).toBeGreaterThan(0);
    expect(row.components.length).toBeLessThanOrEqual(5);
    for (const b of row.components) {
      expect(b.type).toBe(ComponentType.Button);
      expect(labelOf(b).length).toBeGreaterThan(0);
      expect(labelOf(b).length).toBeLessThanOrEqual(80);
      if (b.style === ButtonStyle.Link) {
        expect(new URL(b.url).protocol).toMatch(/^https?:$/);
        expect(b.url.length).toBeLessThanOrEqual(512);
      } else if ('custom_id' in b) {
        expect(b.custom_id.length).toBeLessThanOrEqual(100);
        expect(ids.has(b.custom_id), `duplicate custom_id ${b.custom_id}`).toBe(false);
        ids.add(b.custom_id);
      }
    }
  }
  for (const s of texts(msg)) {
    expect(s, 'lone surrogate').not.toMatch(LONE_SURROGATE);
    expect(s, 'control or bidi character').not.toMatch(CONTROL);
  }
}

/** Nothing renders as a mass or role mention; user mentions only of the IDs allowed. */
export function expectNoPing(msg: RenderedMessage, allowedUsers: readonly string[] = []): void {
  for (const s of texts(msg)) {
    expect(s).not.toMatch(/@(everyone|here)/i);
    expect(s).not.toMatch(/<@&/);
    expect(s).not.toMatch(/<#/);
    for (const m of s.matchAll(/<@!?(\d+)>/g)) expect(allowedUsers).toContain(m[1]);
  }
}

export function fieldValue(msg: RenderedMessage, name: string): string | undefined {
  return msg.embeds[0]?.fields?.find((f) => f.name === name)?.value;
}

export function snowflake(n: number): string {
  return String(100_000_000_000_000_000n + BigInt(n));
}

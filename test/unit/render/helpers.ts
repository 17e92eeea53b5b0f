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
import type { LayoutMessage, RenderedMessage } from '../../../src/render/message.js';
import { type ViewButton, viewField, viewOf } from '../../support/layout-view.js';
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

function labelOf(b: APIButtonComponent | ViewButton): string {
  return 'label' in b ? (b.label ?? '') : '';
}

function buttonsOf(msg: RenderedMessage): APIButtonComponent[] {
  return viewOf(msg).rows.flat() as APIButtonComponent[];
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

/** The message as read: title, description, fields, footer, images, buttons (support/layout-view.ts). */
export const view = viewOf;

/** The message's embeds; fails the test for a V2 layout. */
export function embedsOf(msg: RenderedMessage): APIEmbed[] {
  if ('layout' in msg) throw new Error('expected an embed message, got a V2 layout');
  return msg.embeds;
}

export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

function expectButtonsWithinLimits(
  rows: ReadonlyArray<{ type: number; components: readonly unknown[] }>,
): void {
  const ids = new Set<string>();
  for (const row of rows) {
    expect(row.type).toBe(ComponentType.ActionRow);
    expect(row.components.length).toBeGreaterThan(0);
    expect(row.components.length).toBeLessThanOrEqual(5);
    for (const b of row.components as APIButtonComponent[]) {
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
}

type Node = { type: number; [key: string]: unknown };

/** Discord's Components V2 rules, checked on the JSON: counts, texts, nesting, media. */
function expectLayoutWithinLimits(msg: LayoutMessage): void {
  let count = 0;
  let text = 0;
  const rows: Array<{ type: number; components: unknown[] }> = [];
  const files = new Set((msg.files ?? []).map((f) => f.name));
  const media = (url: unknown): void => {
    expect(typeof url).toBe('string');
    const u = url as string;
    if (u.startsWith('attachment://')) expect(files.has(u.slice('attachment://'.length)), u).toBe(true);
    else expect(new URL(u).protocol).toMatch(/^https?:$/);
  };
  const visit = (c: Node, allowed: readonly number[]): void => {
    count += 1;
    expect(allowed, `component type ${c.type} here`).toContain(c.type);
    switch (c.type) {
      case ComponentType.Container:
        expect((c.components as Node[]).length).toBeGreaterThan(0);
        expect(c.accent_color as number).toBeLessThanOrEqual(0xffffff);
        for (const child of c.components as Node[]) visit(child, [1, 9, 10, 12, 13, 14]);
        break;
      case ComponentType.Section: {
        const texts = c.components as Node[];
        expect(texts.length).toBeGreaterThanOrEqual(1);
        expect(texts.length).toBeLessThanOrEqual(3);
        for (const t of texts) visit(t, [10]);
        visit(c.accessory as Node, [2, 11]);
        break;
      }
      case ComponentType.TextDisplay: {
        const content = c.content as string;
        expect(content.trim().length).toBeGreaterThan(0);
        text += content.length;
        break;
      }
      case ComponentType.Thumbnail:
        media((c.media as { url?: unknown }).url);
        expect(((c.description as string | undefined) ?? '').length).toBeLessThanOrEqual(1024);
        break;
      case ComponentType.MediaGallery: {
        const items = c.items as Array<{ media: { url: unknown }; description?: string }>;
        expect(items.length).toBeGreaterThan(0);
        expect(items.length).toBeLessThanOrEqual(10);
        for (const item of items) {
          media(item.media.url);
          expect((item.description ?? '').length).toBeLessThanOrEqual(1024);
        }
        break;
      }
      case ComponentType.ActionRow:
        rows.push(c as unknown as { type: number; components: unknown[] });
        count += (c.components as unknown[]).length;
        break;
    }
  };
  for (const c of msg.layout as unknown as Node[]) visit(c, [1, 9, 10, 12, 13, 14, 17]);
  expect(count, 'components, nested ones counted').toBeLessThanOrEqual(40);
  expect(text, 'text across the TextDisplays').toBeLessThanOrEqual(4000);
  expectButtonsWithinLimits(rows);
}

/** Every Discord limit the issue names, checked on the finished message. */
export function expectWithinLimits(msg: RenderedMessage): void {
  if ('layout' in msg) expectLayoutWithinLimits(msg);
  else {
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
    expectButtonsWithinLimits(msg.components);
  }
  for (const s of viewOf(msg).texts) {
    expect(s, 'lone surrogate').not.toMatch(LONE_SURROGATE);
    expect(s, 'control or bidi character').not.toMatch(CONTROL);
  }
}

/** Nothing renders as a mass or role mention; user mentions only of the IDs allowed. */
export function expectNoPing(msg: RenderedMessage, allowedUsers: readonly string[] = []): void {
  for (const s of viewOf(msg).texts) {
    expect(s).not.toMatch(/@(everyone|here)/i);
    expect(s).not.toMatch(/<@&/);
    expect(s).not.toMatch(/<#/);
    for (const m of s.matchAll(/<@!?(\d+)>/g)) expect(allowedUsers).toContain(m[1]);
  }
}

export function fieldValue(msg: RenderedMessage, name: string): string | undefined {
  return viewField(msg, name);
}

export function snowflake(n: number): string {
  return String(100_000_000_000_000_000n + BigInt(n));
}

/**
 * Components V2 layouts (message flag IS_COMPONENTS_V2): a Container with an accent colour, a
 * Section with an avatar as Thumbnail, TextDisplays, Separators, a MediaGallery, buttons inside.
 * Plain Discord JSON, as the embed renderers produce. Discord refuses such a message beside
 * `content` or `embeds`, over 40 components (nested ones count) or over 4000 characters of text
 * across its TextDisplays; `fitLayout` keeps every layout inside those limits, whatever the
 * directory sent. The text given here is escaped already by whoever wrote it (render/text.ts).
 */
import {
  type APIButtonComponent,
  type APIComponentInContainer,
  type APIContainerComponent,
  type APIMediaGalleryComponent,
  type APIMessageTopLevelComponent,
  type APISectionComponent,
  type APISeparatorComponent,
  type APITextDisplayComponent,
  type APIThumbnailComponent,
  ComponentType,
  SeparatorSpacingSize,
} from 'discord.js';
import { httpUrl, plainText, truncate } from './text.js';

export const LAYOUT_LIMITS = {
  /** Components in a message, nested ones counted. */
  components: 40,
  /** Characters across every TextDisplay of a message. */
  text: 4000,
  sectionTexts: 3,
  galleryItems: 10,
  /** A thumbnail's or a gallery item's description (alt text). */
  mediaDescription: 1024,
} as const;

/** A TextDisplay, or null for blank text (Discord refuses an empty one). */
export function text(content: string | null | undefined): APITextDisplayComponent | null {
  if (content === null || content === undefined || content.trim() === '') return null;
  return { type: ComponentType.TextDisplay, content: truncate(content, LAYOUT_LIMITS.text) };
}

/** Alt text: one plain line, cut to Discord's limit; none when empty. */
function altText(description: string | null | undefined): { description?: string } {
  const alt = plainText(description, LAYOUT_LIMITS.mediaDescription);
  return alt === '' ? {} : { description: alt };
}

/** A thumbnail of an http(s) image or an uploaded file (`attachment://name`), or null for anything else. */
export function thumbnail(
  url: string | null | undefined,
  description?: string,
): APIThumbnailComponent | null {
  const safe = mediaUrl(url);
  return safe ? { type: ComponentType.Thumbnail, media: { url: safe }, ...altText(description) } : null;
}

function mediaUrl(url: string | null | undefined): string | null {
  if (url && /^attachment:\/\/[\w.-]{1,200}$/.test(url)) return url;
  return httpUrl(url);
}

/**
 * Texts beside an accessory (a thumbnail or a button): a Section when there is one, the texts
 * alone when there is none (a Section without an accessory is refused).
 */
export function section(
  texts: ReadonlyArray<APITextDisplayComponent | null>,
  accessory: APIThumbnailComponent | APIButtonComponent | null,
): APIComponentInContainer[] {
  const present = texts.filter((t): t is APITextDisplayComponent => t !== null);
  if (present.length === 0) return [];
  if (!accessory) return present;
  const inSection = present.slice(0, LAYOUT_LIMITS.sectionTexts);
  const out: APIComponentInContainer[] = [
    { type: ComponentType.Section, components: inSection, accessory } satisfies APISectionComponent,
  ];
  return [...out, ...present.slice(LAYOUT_LIMITS.sectionTexts)];
}

export function separator(options: { divider?: boolean; large?: boolean } = {}): APISeparatorComponent {
  return {
    type: ComponentType.Separator,
    divider: options.divider ?? true,
    spacing: options.large ? SeparatorSpacingSize.Large : SeparatorSpacingSize.Small,
  };
}

/** Images with their alt text (a chart as `attachment://name`); null when none is usable. */
export function gallery(
  items: ReadonlyArray<{ url: string; description?: string | undefined }>,
): APIMediaGalleryComponent | null {
  const usable = items.flatMap((item) => {
    const url = mediaUrl(item.url);
    return url ? [{ media: { url }, ...altText(item.description) }] : [];
  });
  if (usable.length === 0) return null;
  return { type: ComponentType.MediaGallery, items: usable.slice(0, LAYOUT_LIMITS.galleryItems) };
}

/**
 * Labelled facts as one text: `**Label:** value` a line, a value of several lines under its
 * label. Facts without a value are left out; null when none is left.
 */
export function facts(pairs: ReadonlyArray<readonly [string, string | null | undefined]>): string | null {
  const lines = pairs.flatMap(([label, value]) => {
    if (value === null || value === undefined || value.trim() === '') return [];
    return [value.includes('\n') ? `**${label}:**\n${value}` : `**${label}:** ${value}`];
  });
  return lines.length > 0 ? lines.join('\n') : null;
}

/** Small grey text under the rest (ids, page numbers): Discord's `-#` subtext. */
export function subtext(content: string | null | undefined): APITextDisplayComponent | null {
  if (!content || content.trim() === '') return null;
  return text(
    content
      .split('\n')
      .map((line) => `-# ${line}`)
      .join('\n'),
  );
}

/** A container with its accent colour; nulls and separators with nothing after them dropped. */
export function container(
  accent: number,
  children: ReadonlyArray<APIComponentInContainer | readonly APIComponentInContainer[] | null>,
): APIContainerComponent {
  const flat = children.flatMap((c) =>
    c === null ? [] : Array.isArray(c) ? c : [c as APIComponentInContainer],
  );
  // A separator opening, closing or doubling another draws a line between nothing.
  const tidy = flat.filter(
    (c, i) =>
      c.type !== ComponentType.Separator ||
      (i > 0 && i < flat.length - 1 && flat[i + 1]?.type !== ComponentType.Separator),
  );
  return { type: ComponentType.Container, accent_color: accent, components: tidy };
}

type AnyComponent =
  | APIMessageTopLevelComponent
  | APIComponentInContainer
  | APIButtonComponent
  | APIThumbnailComponent;

function childrenOf(c: AnyComponent): AnyComponent[] {
  switch (c.type) {
    case ComponentType.Container:
      return c.components;
    case ComponentType.Section:
      return [...c.components, c.accessory];
    case ComponentType.ActionRow:
      return c.components as AnyComponent[];
    default:
      return [];
  }
}

function walk(components: readonly AnyComponent[], visit: (c: AnyComponent) => void): void {
  for (const c of components) {
    visit(c);
    walk(childrenOf(c), visit);
  }
}

/** Every component of a layout, nested ones counted, as Discord counts toward its 40. */
export function componentCount(components: readonly APIMessageTopLevelComponent[]): number {
  let n = 0;
  walk(components, () => {
    n += 1;
  });
  return n;
}

/** The characters of every TextDisplay, as Discord counts toward its 4000. */
export function layoutTextLength(components: readonly APIMessageTopLevelComponent[]): number {
  let n = 0;
  walk(components, (c) => {
    if (c.type === ComponentType.TextDisplay) n += c.content.length;
  });
  return n;
}

function textDisplays(components: readonly APIMessageTopLevelComponent[]): APITextDisplayComponent[] {
  const out: APITextDisplayComponent[] = [];
  walk(components, (c) => {
    if (c.type === ComponentType.TextDisplay) out.push(c);
  });
  return out;
}

/** Removes the last component of a container that can go (buttons first, then the rest). */
function dropLast(top: APIMessageTopLevelComponent[]): boolean {
  for (let i = top.length - 1; i >= 0; i--) {
    const c = top[i];
    if (c?.type === ComponentType.Container && c.components.length > 1) {
      const last = c.components[c.components.length - 1];
      if (last?.type === ComponentType.ActionRow && last.components.length > 1) last.components.pop();
      else c.components.pop();
      return true;
    }
  }
  if (top.length > 1) {
    top.pop();
    return true;
  }
  return false;
}

/**
 * The layout within Discord's limits: the longest TextDisplay is cut first while the text is over
 * 4000 characters (a description gives way before the facts), then trailing components go while
 * there are more than 40. Works on a copy; a layout within both is returned as it is.
 */
export function fitLayout(components: readonly APIMessageTopLevelComponent[]): APIMessageTopLevelComponent[] {
  // Most layouts fit: they are handed back as they are, without a copy.
  if (
    layoutTextLength(components) <= LAYOUT_LIMITS.text &&
    componentCount(components) <= LAYOUT_LIMITS.components
  ) {
    return [...components];
  }
  const out = structuredClone(components) as APIMessageTopLevelComponent[];
  let excess = layoutTextLength(out) - LAYOUT_LIMITS.text;
  while (excess > 0) {
    const longest = textDisplays(out).reduce((a, b) => (b.content.length > a.content.length ? b : a));
    // Never below a few characters: several long texts share the cut.
    const keep = Math.max(16, longest.content.length - excess);
    if (keep >= longest.content.length) break;
    longest.content = truncate(longest.content, keep);
    excess = layoutTextLength(out) - LAYOUT_LIMITS.text;
  }
  while (componentCount(out) > LAYOUT_LIMITS.components && dropLast(out)) {
    // dropLast removed one.
  }
  return out;
}

/** A short notice: a title and a text in a container of the given colour. */
export function notice(accent: number, title: string, body: string): APIContainerComponent {
  return container(accent, [text(`### ${title}`), text(body)]);
}

// Components V2 (the IS_COMPONENTS_V2 message flag): the rules Discord enforces on such a message
// beyond the shapes its API description gives (spec/conformance.ts checks those): no legacy fields
// (content, embeds, poll, stickers) beside the flag, the flag never taken off by an edit, which
// component may sit where, the 40-component and 4000-character budgets, media that point at http(s)
// or at a file of the same request (or of the edited message), unique custom_ids and ids.
// Called from validateMessage (interactions.ts), whose error tree these rules add to.

import type { MessagePayload } from './fixtures.js';
import type { ErrorTree, FileInfo, RouteResult } from './interactions.js';
import { errors, fieldError, isRecord } from './interactions.js';

export const IS_COMPONENTS_V2 = 1 << 15;
const EPHEMERAL = 1 << 6;

export const ComponentType = {
  ActionRow: 1,
  Button: 2,
  Section: 9,
  TextDisplay: 10,
  Thumbnail: 11,
  MediaGallery: 12,
  File: 13,
  Separator: 14,
  Container: 17,
} as const;

const TOP_LEVEL = [1, 9, 10, 12, 13, 14, 17];
const IN_CONTAINER = [1, 9, 10, 12, 13, 14];
const ACCESSORY = [2, 11];
const MAX_COMPONENTS = 40;
const MAX_TEXT = 4000;

type Path = Array<string | number>;

/** What a message body is judged against: the files of its request, the message an edit changes. */
export interface MessageContext {
  files?: readonly FileInfo[];
  existing?: MessagePayload;
}

/** The body (or, for an edit, the message it changes) carries the flag: the V2 rules apply. */
export function isComponentsV2(body: Record<string, unknown>, existing?: MessagePayload): boolean {
  const flags = typeof body.flags === 'number' ? body.flags : 0;
  return (
    (flags & IS_COMPONENTS_V2) !== 0 || (existing !== undefined && (existing.flags & IS_COMPONENTS_V2) !== 0)
  );
}

/**
 * A deferred response (callback type 5) may set EPHEMERAL and nothing else: IS_COMPONENTS_V2 is
 * given by the edit that fills the deferred message in.
 */
export function deferredFlagsError(data: Record<string, unknown> | undefined): RouteResult | null {
  const flags = data?.flags;
  if (flags === undefined || flags === null || typeof flags !== 'number') return null;
  if ((flags & ~EPHEMERAL) === 0) return null;
  const tree: ErrorTree = {};
  fieldError(
    tree,
    ['data', 'flags'],
    'INTERACTION_RESPONSE_FLAGS_INVALID',
    'A deferred response may only set the EPHEMERAL flag.',
  );
  return errors.invalidForm(tree);
}

/** The V2 rules for a body (whose message has, or gets, the flag), added to `tree`. */
export function validateComponentsV2Message(
  tree: ErrorTree,
  prefix: string[],
  body: Record<string, unknown>,
  context: MessageContext,
): void {
  const { existing } = context;
  if (existing && (existing.flags & IS_COMPONENTS_V2) !== 0 && typeof body.flags === 'number') {
    if ((body.flags & IS_COMPONENTS_V2) === 0) {
      fieldError(
        tree,
        [...prefix, 'flags'],
        'MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG',
        'The IS_COMPONENTS_V2 flag cannot be removed from a message.',
      );
    }
  }
  legacyFields(tree, prefix, body, existing);
  const components = body.components;
  if (!Array.isArray(components)) return;
  const walk = new Walk(tree, attachmentNames(body, context));
  components.forEach((c, i) => {
    walk.component(c, [...prefix, 'components', i], TOP_LEVEL);
  });
  if (walk.count > MAX_COMPONENTS) {
    fieldError(
      tree,
      [...prefix, 'components'],
      'MESSAGE_COMPONENTS_MAX_EXCEEDED',
      `A message may have at most ${MAX_COMPONENTS} components, nested ones counted.`,
    );
  }
  if (walk.textLength > MAX_TEXT) {
    fieldError(
      tree,
      [...prefix, 'components'],
      'MESSAGE_TEXT_DISPLAY_TOTAL_LENGTH_EXCEEDED',
      `The text displays of a message may hold at most ${MAX_TEXT} characters together.`,
    );
  }
}

/** content, embeds, poll and sticker_ids are refused beside the flag; for an edit, as merged. */
function legacyFields(
  tree: ErrorTree,
  prefix: string[],
  body: Record<string, unknown>,
  existing: MessagePayload | undefined,
): void {
  const refuse = (field: string) =>
    fieldError(
      tree,
      [...prefix, field],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      `Cannot use ${field} with components V2`,
    );
  const content = 'content' in body ? body.content : existing?.content;
  if (typeof content === 'string' && content.length > 0) refuse('content');
  const embeds = 'embeds' in body ? body.embeds : existing?.embeds;
  if (Array.isArray(embeds) && embeds.length > 0) refuse('embeds');
  if (body.poll !== undefined && body.poll !== null) refuse('poll');
  if (Array.isArray(body.sticker_ids) && body.sticker_ids.length > 0) refuse('sticker_ids');
}

/**
 * The names `attachment://` may name: the files uploaded with the request (and the names the
 * body's `attachments` give them), and the attachments the edited message keeps.
 */
function attachmentNames(body: Record<string, unknown>, context: MessageContext): Set<string> {
  const files = context.files ?? [];
  const names = new Set(files.map((f) => f.filename));
  const listed = Array.isArray(body.attachments) ? body.attachments.filter(isRecord) : undefined;
  for (const entry of listed ?? []) {
    const index = Number(entry.id);
    if (Number.isInteger(index) && index >= 0 && index < files.length && typeof entry.filename === 'string') {
      names.add(entry.filename);
    }
  }
  const keptIds = listed?.map((a) => String(a.id));
  for (const attachment of context.existing?.attachments ?? []) {
    if (!isRecord(attachment) || typeof attachment.filename !== 'string') continue;
    if (keptIds === undefined || keptIds.includes(String(attachment.id))) names.add(attachment.filename);
  }
  return names;
}

/** One pass over the component tree: placement, limits, and the message-wide counts. */
class Walk {
  count = 0;
  textLength = 0;
  readonly #customIds = new Set<string>();
  readonly #ids = new Set<number>();

  constructor(
    private readonly tree: ErrorTree,
    private readonly attachments: ReadonlySet<string>,
  ) {}

  #error(path: Path, code: string, message: string): void {
    fieldError(this.tree, path, code, message);
  }

  #length(path: Path, value: unknown, min: number, max: number): void {
    if (typeof value !== 'string') {
      this.#error(path, 'BASE_TYPE_REQUIRED', 'This field is required');
    } else if (value.length < min || value.length > max) {
      this.#error(path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);
    }
  }

  #listLength(path: Path, list: unknown[], min: number, max: number): void {
    if (list.length < min || list.length > max) {
      this.#error(path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);
    }
  }

  /** Visits a component allowed here as one of `types`. */
  component(value: unknown, path: Path, types: readonly number[]): void {
    if (!isRecord(value)) return;
    this.count += 1;
    if (typeof value.id === 'number') {
      if (this.#ids.has(value.id)) {
        this.#error([...path, 'id'], 'COMPONENT_ID_DUPLICATED', 'Component ids must be unique in a message.');
      }
      this.#ids.add(value.id);
    }
    if (typeof value.type !== 'number' || !types.includes(value.type)) {
      this.#error(
        path,
        'UNION_TYPE_CHOICES',
        `Value of field "type" must be one of (${types.join(', ')}${types.length === 1 ? ',' : ''}).`,
      );
      return;
    }
    switch (value.type) {
      case ComponentType.Container:
        this.#container(value, path);
        break;
      case ComponentType.Section:
        this.#section(value, path);
        break;
      case ComponentType.TextDisplay:
        this.#textDisplay(value, path);
        break;
      case ComponentType.Thumbnail:
        this.#media([...path, 'media'], value.media);
        if (value.description !== undefined && value.description !== null) {
          this.#length([...path, 'description'], value.description, 0, 1024);
        }
        break;
      case ComponentType.MediaGallery:
        this.#gallery(value, path);
        break;
      case ComponentType.File:
        this.#media([...path, 'file'], value.file, true);
        break;
      case ComponentType.ActionRow:
        this.#actionRow(value, path);
        break;
      case ComponentType.Button:
        this.#button(value, path);
        break;
      default:
        break;
    }
  }

  #container(value: Record<string, unknown>, path: Path): void {
    const color = value.accent_color;
    if (typeof color === 'number' && (!Number.isInteger(color) || color < 0 || color > 0xffffff)) {
      this.#error(
        [...path, 'accent_color'],
        color < 0 ? 'NUMBER_TYPE_MIN' : 'NUMBER_TYPE_MAX',
        'Must be an integer from 0 to 16777215 (0xFFFFFF).',
      );
    }
    const children = Array.isArray(value.components) ? value.components : [];
    if (children.length === 0) {
      this.#error([...path, 'components'], 'BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.');
    }
    children.forEach((c, i) => {
      this.component(c, [...path, 'components', i], IN_CONTAINER);
    });
  }

  #section(value: Record<string, unknown>, path: Path): void {
    const texts = Array.isArray(value.components) ? value.components : [];
    this.#listLength([...path, 'components'], texts, 1, 3);
    texts.forEach((c, i) => {
      this.component(c, [...path, 'components', i], [ComponentType.TextDisplay]);
    });
    if (!isRecord(value.accessory)) {
      this.#error([...path, 'accessory'], 'BASE_TYPE_REQUIRED', 'This field is required');
      return;
    }
    this.component(value.accessory, [...path, 'accessory'], ACCESSORY);
  }

  #textDisplay(value: Record<string, unknown>, path: Path): void {
    this.#length([...path, 'content'], value.content, 1, MAX_TEXT);
    if (typeof value.content === 'string') this.textLength += value.content.length;
  }

  #gallery(value: Record<string, unknown>, path: Path): void {
    const items = Array.isArray(value.items) ? value.items : [];
    this.#listLength([...path, 'items'], items, 1, 10);
    items.forEach((item, i) => {
      if (!isRecord(item)) return;
      this.#media([...path, 'items', i, 'media'], item.media);
      if (item.description !== undefined && item.description !== null) {
        this.#length([...path, 'items', i, 'description'], item.description, 0, 1024);
      }
    });
  }

  /** An unfurled media item: http(s), or `attachment://name` of a file the message has. */
  #media(path: Path, media: unknown, attachmentOnly = false): void {
    const url = isRecord(media) ? media.url : undefined;
    if (typeof url !== 'string') {
      this.#error([...path, 'url'], 'BASE_TYPE_REQUIRED', 'This field is required');
      return;
    }
    const reference = /^attachment:\/\/(.+)$/.exec(url);
    if (reference) {
      if (!this.attachments.has(reference[1]!)) {
        this.#error(
          [...path, 'url'],
          'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
          `No attachment named ${reference[1]} in this message.`,
        );
      }
      return;
    }
    if (attachmentOnly || !/^https?:\/\/[^/\s]+/i.test(url)) {
      this.#error(
        [...path, 'url'],
        'UNFURLED_MEDIA_ITEM_URL_INVALID',
        attachmentOnly
          ? 'Must be an attachment:// reference.'
          : 'Scheme must be one of (http, https, attachment).',
      );
    }
  }

  #actionRow(value: Record<string, unknown>, path: Path): void {
    const children = Array.isArray(value.components) ? value.components : [];
    this.#listLength([...path, 'components'], children, 1, 5);
    children.forEach((c, i) => {
      if (isRecord(c) && c.type !== ComponentType.Button) {
        // Selects and the like: counted and their custom_id checked; their shape is the spec's.
        this.count += 1;
        this.#customId(c, [...path, 'components', i]);
        return;
      }
      this.component(c, [...path, 'components', i], [ComponentType.Button]);
    });
  }

  #button(value: Record<string, unknown>, path: Path): void {
    // Link (5) and premium (6) buttons carry no custom_id.
    if (value.style === 5 || value.style === 6) return;
    this.#customId(value, path);
  }

  #customId(value: Record<string, unknown>, path: Path): void {
    this.#length([...path, 'custom_id'], value.custom_id, 1, 100);
    if (typeof value.custom_id !== 'string') return;
    if (this.#customIds.has(value.custom_id)) {
      this.#error(
        [...path, 'custom_id'],
        'COMPONENT_CUSTOM_ID_DUPLICATED',
        'Component custom id cannot be duplicated',
      );
    }
    this.#customIds.add(value.custom_id);
  }
}

/** The texts of a V2 message's TextDisplays, nested ones included, in order (what a reader sees, mentions too). */
export function textDisplayContents(components: unknown): string[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((c): string[] => {
    if (!isRecord(c)) return [];
    if (c.type === ComponentType.TextDisplay) return typeof c.content === 'string' ? [c.content] : [];
    return [
      ...textDisplayContents(c.components),
      ...textDisplayContents(isRecord(c.accessory) ? [c.accessory] : []),
    ];
  });
}

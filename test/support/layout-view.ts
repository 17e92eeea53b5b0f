/**
 * Reads a message as a person sees it, embed or Components V2 layout alike, so a test can say
 * "the card's title is …, its Prefix is …" without caring how the message is built. Written from
 * Discord's JSON alone (never from the renderers' helpers), so it checks them rather than echoes.
 *
 * A layout is read from its first container: a `### ` text is the title, `-# ` lines are the
 * footer, `**Label:** value` lines (or `**Label:**` over the lines under it) are fields, the
 * other texts before the first divider are the description and the ones after it `body`; a
 * section's thumbnail and a media gallery's items are the images; buttons are collected in rows.
 */

export interface ViewField {
  name: string;
  value: string;
}

export interface ViewButton {
  type: number;
  style?: number;
  label?: string;
  url?: string;
  custom_id?: string;
  disabled?: boolean;
}

export interface MessageView {
  /** 'layout' for a Components V2 message (flag 1 << 15, or a body of layout components). */
  kind: 'embed' | 'layout';
  color?: number | undefined;
  title?: string | undefined;
  description?: string | undefined;
  /** Layout texts after the first separator that are not fields (quotes, a chart's figures). */
  body: string[];
  fields: ViewField[];
  footer?: string | undefined;
  thumbnail?: { url: string; description?: string | undefined } | undefined;
  images: Array<{ url: string; description?: string | undefined }>;
  rows: ViewButton[][];
  /** Every text a reader sees (titles, texts, fields, footers, labels), in order. */
  texts: string[];
  /** The message's text without button labels: content, embed texts, or the TextDisplays. */
  prose: string[];
}

type Json = Record<string, unknown>;

const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isJson) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const FACT = /^\*\*(.+?):\*\*(?: (.*))?$/;

/** `**Label:** value` lines and their continuations; null when the text does not open with one. */
export function parseFacts(text: string): ViewField[] | null {
  const lines = text.split('\n');
  if (!FACT.test(lines[0] ?? '')) return null;
  const out: ViewField[] = [];
  for (const line of lines) {
    const m = FACT.exec(line);
    if (m) out.push({ name: m[1] ?? '', value: m[2] ?? '' });
    else {
      const last = out[out.length - 1] as ViewField;
      last.value = last.value === '' ? line : `${last.value}\n${line}`;
    }
  }
  return out;
}

function buttonsOf(row: Json): ViewButton[] {
  return list(row.components).map((b) => b as unknown as ViewButton);
}

function embedView(message: Json): MessageView {
  const embed = list(message.embeds)[0] ?? {};
  const fields = list(embed.fields).map((f) => ({ name: str(f.name) ?? '', value: str(f.value) ?? '' }));
  const footer = isJson(embed.footer) ? str(embed.footer.text) : undefined;
  const thumbnail = isJson(embed.thumbnail) ? { url: str(embed.thumbnail.url) ?? '' } : undefined;
  const image = isJson(embed.image) ? [{ url: str(embed.image.url) ?? '' }] : [];
  const rows = list(message.components).map(buttonsOf);
  const title = str(embed.title);
  const description = str(embed.description);
  const prose = [
    ...(title ? [title] : []),
    ...(description ? [description] : []),
    ...fields.flatMap((f) => [f.name, f.value]),
    ...(footer ? [footer] : []),
  ];
  return {
    kind: 'embed',
    color: typeof embed.color === 'number' ? embed.color : undefined,
    title,
    description,
    body: [],
    fields,
    footer,
    thumbnail,
    images: image,
    rows,
    texts: [...prose, ...rows.flat().flatMap((b) => (b.label ? [b.label] : []))],
    prose,
  };
}

const V2 = 1 << 15;

export function isLayoutMessage(message: unknown): boolean {
  if (!isJson(message)) return false;
  if ('layout' in message) return true;
  if (typeof message.flags === 'number' && (message.flags & V2) !== 0) return true;
  return list(message.components).some((c) => c.type !== 1);
}

function layoutView(top: Json[]): MessageView {
  const view: MessageView = {
    kind: 'layout',
    body: [],
    fields: [],
    images: [],
    rows: [],
    texts: [],
    prose: [],
  };
  const container = top.find((c) => c.type === 17);
  if (container && typeof container.accent_color === 'number') view.color = container.accent_color;
  const description: string[] = [];
  let separated = false;
  const onText = (content: string): void => {
    view.texts.push(content);
    view.prose.push(content);
    const lines = content.split('\n');
    if (view.title === undefined && content.startsWith('### ')) {
      view.title = content.slice(4);
      return;
    }
    if (lines.every((l) => l.startsWith('-# '))) {
      view.footer = lines.map((l) => l.slice(3)).join('\n');
      return;
    }
    const facts = parseFacts(content);
    if (facts) view.fields.push(...facts);
    else if (separated) view.body.push(content);
    else description.push(content);
  };
  const visit = (c: Json): void => {
    switch (c.type) {
      case 17:
        for (const child of list(c.components)) visit(child);
        break;
      case 9:
        for (const child of list(c.components)) visit(child);
        if (isJson(c.accessory)) visit(c.accessory);
        break;
      case 10:
        onText(str(c.content) ?? '');
        break;
      case 11:
        view.thumbnail = {
          url: isJson(c.media) ? (str(c.media.url) ?? '') : '',
          description: str(c.description),
        };
        break;
      case 12:
        for (const item of list(c.items)) {
          view.images.push({
            url: isJson(item.media) ? (str(item.media.url) ?? '') : '',
            description: str(item.description),
          });
        }
        break;
      case 14:
        // A divider parts the description from the rest; a separator without one is spacing.
        if (c.divider !== false) separated = true;
        break;
      case 1: {
        const row = buttonsOf(c);
        view.rows.push(row);
        view.texts.push(...row.flatMap((b) => (b.label ? [b.label] : [])));
        break;
      }
      case 2:
        view.rows.push([c as unknown as ViewButton]);
        break;
    }
  };
  for (const c of top) visit(c);
  if (description.length > 0) view.description = description.join('\n\n');
  return view;
}

/** The view of a message: a renderer's output, a body sent to Discord, or a message the stand-in kept. */
export function viewOf(message: unknown): MessageView {
  if (!isJson(message)) throw new Error('not a message');
  if ('layout' in message) return layoutView(list(message.layout));
  if (isLayoutMessage(message)) return layoutView(list(message.components));
  return embedView(message);
}

/**
 * The message as the embed a test of the classic layout expects: a layout's title, description,
 * facts as fields, footer, thumbnail and first image, so one assertion reads either.
 */
export function asEmbed(message: unknown): {
  title?: string;
  description?: string;
  color?: number;
  fields?: ViewField[];
  footer?: { text: string };
  thumbnail?: { url: string };
  image?: { url: string };
} {
  const v = viewOf(message);
  return {
    ...(v.title === undefined ? {} : { title: v.title }),
    ...(v.description === undefined ? {} : { description: v.description }),
    ...(v.color === undefined ? {} : { color: v.color }),
    ...(v.fields.length > 0 ? { fields: v.fields } : {}),
    ...(v.footer === undefined ? {} : { footer: { text: v.footer } }),
    ...(v.thumbnail ? { thumbnail: { url: v.thumbnail.url } } : {}),
    ...(v.images[0] ? { image: { url: v.images[0].url } } : {}),
  };
}

/** A field's value by its label, embed field or layout fact alike. */
export function viewField(message: unknown, name: string): string | undefined {
  return viewOf(message).fields.find((f) => f.name === name)?.value;
}

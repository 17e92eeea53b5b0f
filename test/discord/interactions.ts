// Interactions and the messages they produce: initial responses, '@original' edits, follow-ups.
// Operations return { status, body } like the REST route would answer; rest.ts does the HTTP part.

import { performance } from 'node:perf_hooks';
import {
  deferredFlagsError,
  isComponentsV2,
  type MessageContext,
  validateComponentsV2Message,
} from './components-v2.js';
import {
  type InteractionPayload,
  type MessagePayload,
  makeMessage,
  snowflake,
  type UserFixture,
} from './fixtures.js';
import { modalErrors } from './modals.js';
import type {
  InteractionDelivery,
  InteractionHandle,
  InteractionResponseRecord,
  InteractionView,
  RecordedRestRequest,
  ViewedMessage,
} from './types.js';
import { WaitList } from './waiters.js';

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const MessageFlag = {
  SuppressEmbeds: 1 << 2,
  Ephemeral: 1 << 6,
  Loading: 1 << 7,
  SuppressNotifications: 1 << 12,
  IsComponentsV2: 1 << 15,
} as const;

const SETTABLE_FLAGS =
  MessageFlag.SuppressEmbeds |
  MessageFlag.Ephemeral |
  MessageFlag.SuppressNotifications |
  MessageFlag.IsComponentsV2;
const EDITABLE_FLAGS = MessageFlag.SuppressEmbeds | MessageFlag.IsComponentsV2;

export const CallbackType = {
  Pong: 1,
  ChannelMessageWithSource: 4,
  DeferredChannelMessageWithSource: 5,
  DeferredMessageUpdate: 6,
  UpdateMessage: 7,
  AutocompleteResult: 8,
  Modal: 9,
  LaunchActivity: 12,
} as const;

export const errors = {
  unknownInteraction: (): RouteResult => ({
    status: 404,
    body: { message: 'Unknown interaction', code: 10062 },
  }),
  alreadyAcknowledged: (): RouteResult => ({
    status: 400,
    body: { message: 'Interaction has already been acknowledged.', code: 40060 },
  }),
  unknownWebhook: (): RouteResult => ({ status: 404, body: { message: 'Unknown Webhook', code: 10015 } }),
  unknownMessage: (): RouteResult => ({ status: 404, body: { message: 'Unknown Message', code: 10008 } }),
  emptyMessage: (): RouteResult => ({
    status: 400,
    body: { message: 'Cannot send an empty message', code: 50006 },
  }),
  invalidForm: (errorTree: Record<string, unknown>): RouteResult => ({
    status: 400,
    body: { message: 'Invalid Form Body', code: 50035, errors: errorTree },
  }),
};

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Validation (the limits Discord enforces on message bodies)

export type ErrorTree = Record<string, unknown>;

export function fieldError(
  tree: ErrorTree,
  path: Array<string | number>,
  code: string,
  message: string,
): void {
  let node: ErrorTree = tree;
  for (const key of path) {
    const k = String(key);
    const next = node[k];
    if (isRecord(next)) node = next;
    else {
      const created: ErrorTree = {};
      node[k] = created;
      node = created;
    }
  }
  const list = Array.isArray(node._errors) ? node._errors : [];
  list.push({ code, message });
  node._errors = list;
}

function checkLength(
  tree: ErrorTree,
  path: Array<string | number>,
  value: unknown,
  max: number,
  min = 0,
): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'string') {
    fieldError(tree, path, 'BASE_TYPE_STRING', 'Must be a string.');
    return 0;
  }
  if (value.length > max) {
    fieldError(tree, path, 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  } else if (value.length < min) {
    fieldError(tree, path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);
  }
  return value.length;
}

function validateEmbeds(tree: ErrorTree, prefix: string[], embeds: unknown): void {
  if (embeds === undefined || embeds === null) return;
  if (!Array.isArray(embeds)) {
    fieldError(tree, [...prefix, 'embeds'], 'BASE_TYPE_LIST', 'Must be a list.');
    return;
  }
  if (embeds.length > 10) {
    fieldError(tree, [...prefix, 'embeds'], 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.');
  }
  let total = 0;
  embeds.forEach((embed, i) => {
    const p = [...prefix, 'embeds', i];
    if (!isRecord(embed)) {
      fieldError(tree, p, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    total += checkLength(tree, [...p, 'title'], embed.title, 256);
    total += checkLength(tree, [...p, 'description'], embed.description, 4096);
    if (isRecord(embed.footer)) total += checkLength(tree, [...p, 'footer', 'text'], embed.footer.text, 2048);
    if (isRecord(embed.author)) total += checkLength(tree, [...p, 'author', 'name'], embed.author.name, 256);
    if (Array.isArray(embed.fields)) {
      if (embed.fields.length > 25) {
        fieldError(tree, [...p, 'fields'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
      }
      embed.fields.forEach((field, j) => {
        if (!isRecord(field)) return;
        total += checkLength(tree, [...p, 'fields', j, 'name'], field.name, 256, 1);
        total += checkLength(tree, [...p, 'fields', j, 'value'], field.value, 1024, 1);
        if (field.name === undefined)
          fieldError(tree, [...p, 'fields', j, 'name'], 'BASE_TYPE_REQUIRED', 'This field is required');
        if (field.value === undefined) {
          fieldError(tree, [...p, 'fields', j, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
        }
      });
    }
  });
  if (total > 6000) {
    fieldError(
      tree,
      [...prefix, 'embeds'],
      'MAX_EMBED_SIZE_EXCEEDED',
      'Embed size exceeds maximum size of 6000',
    );
  }
}

/** Components without IS_COMPONENTS_V2: action rows only, at most 5 (the V2 rules: components-v2.ts). */
function validateComponents(tree: ErrorTree, prefix: string[], components: unknown): void {
  if (components === undefined || components === null) return;
  if (!Array.isArray(components)) {
    fieldError(tree, [...prefix, 'components'], 'BASE_TYPE_LIST', 'Must be a list.');
    return;
  }
  if (components.length > 5) {
    fieldError(tree, [...prefix, 'components'], 'BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.');
  }
  components.forEach((row, i) => {
    if (!isRecord(row)) return;
    if (row.type !== 1) {
      fieldError(
        tree,
        [...prefix, 'components', i],
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (1,).',
      );
      return;
    }
    if (Array.isArray(row.components)) {
      if (row.components.length > 5) {
        fieldError(
          tree,
          [...prefix, 'components', i, 'components'],
          'BASE_TYPE_MAX_LENGTH',
          'Must be 5 or fewer in length.',
        );
      }
      row.components.forEach((c, j) => {
        if (isRecord(c))
          checkLength(tree, [...prefix, 'components', i, 'components', j, 'custom_id'], c.custom_id, 100, 1);
      });
    }
  });
}

/**
 * Validates a message body. `prefix` is ['data'] for interaction callbacks. `context.existing` for
 * edits: absent fields are kept, so emptiness is judged on the merged result by the caller; the
 * V2 rules see the message's flag and its attachments. `context.files`: the request's uploads.
 */
export function validateMessage(
  body: Record<string, unknown>,
  prefix: string[],
  context: MessageContext = {},
): RouteResult | null {
  const tree: ErrorTree = {};
  checkLength(tree, [...prefix, 'content'], body.content, 2000);
  validateAllowedMentions(tree, [...prefix, 'allowed_mentions'], body.allowed_mentions);
  validateEmbeds(tree, prefix, body.embeds);
  if (isComponentsV2(body, context.existing)) validateComponentsV2Message(tree, prefix, body, context);
  else validateComponents(tree, prefix, body.components);
  if (Object.keys(tree).length === 0) return null;
  return errors.invalidForm(tree);
}

const MENTION_TYPES = ['roles', 'users', 'everyone'];
const SNOWFLAKE = /^\d{1,20}$/;

/** The allowed mentions object: its fields' types and limits, and `parse` exclusive of the id lists. */
function validateAllowedMentions(tree: ErrorTree, path: string[], value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isRecord(value)) {
    fieldError(tree, path, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const parse = value.parse;
  if (parse !== undefined && parse !== null) {
    if (!Array.isArray(parse)) fieldError(tree, [...path, 'parse'], 'BASE_TYPE_LIST', 'Must be a list.');
    else {
      parse.forEach((item, i) => {
        if (typeof item !== 'string' || !MENTION_TYPES.includes(item)) {
          fieldError(
            tree,
            [...path, 'parse', i],
            'BASE_TYPE_CHOICES',
            "Value must be one of {'roles', 'users', 'everyone'}.",
          );
        }
      });
    }
  }
  for (const kind of ['users', 'roles'] as const) {
    const list = value[kind];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      fieldError(tree, [...path, kind], 'BASE_TYPE_LIST', 'Must be a list.');
      continue;
    }
    if (list.length > 100) {
      fieldError(tree, [...path, kind], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
    }
    list.forEach((id, i) => {
      if (typeof id !== 'string' || !SNOWFLAKE.test(id)) {
        fieldError(tree, [...path, kind, i], 'NUMBER_TYPE_COERCE', `Value "${String(id)}" is not snowflake.`);
      }
    });
    // An empty (or null) list beside `parse` is allowed, as on Discord.
    if (Array.isArray(parse) && parse.includes(kind) && list.length > 0) {
      fieldError(
        tree,
        path,
        'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
        `parse:["${kind}"] and ${kind}: [ids...] are mutually exclusive.`,
      );
    }
  }
  if (
    value.replied_user !== undefined &&
    value.replied_user !== null &&
    typeof value.replied_user !== 'boolean'
  ) {
    fieldError(tree, [...path, 'replied_user'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
  }
}

export function hasVisibleContent(m: {
  content?: unknown;
  embeds?: unknown;
  components?: unknown;
  attachments?: unknown;
  sticker_ids?: unknown;
  poll?: unknown;
}): boolean {
  const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;
  return (
    (typeof m.content === 'string' && m.content.length > 0) ||
    nonEmpty(m.embeds) ||
    nonEmpty(m.components) ||
    nonEmpty(m.attachments) ||
    nonEmpty(m.sticker_ids) ||
    m.poll !== undefined
  );
}

// ---------------------------------------------------------------------------------------------
// Store

interface StoredMessage {
  message: MessagePayload;
  deleted: boolean;
  /** The interaction that created the message, if any. */
  interactionId?: string;
}

export interface InteractionRecord {
  id: string;
  token: string;
  type: number;
  payload: InteractionPayload;
  user: UserFixture;
  channelId: string;
  shardId: number;
  sentAt: number;
  delivery: InteractionDelivery;
  ack?: InteractionResponseRecord;
  /** The message '@original' refers to. */
  originalId?: string;
  /** For component interactions: the message the component is on. */
  componentMessageId?: string;
  followUpIds: string[];
  requests: RecordedRestRequest[];
  waiters: WaitList<RecordedRestRequest>;
  responseWaiters: WaitList<InteractionResponseRecord>;
}

export interface FileInfo {
  filename: string;
  contentType: string;
  size: number;
}

export class InteractionStore {
  readonly byId = new Map<string, InteractionRecord>();
  readonly byToken = new Map<string, InteractionRecord>();
  readonly messages = new Map<string, StoredMessage>();

  constructor(
    private readonly applicationId: string,
    private readonly botUser: UserFixture,
    private readonly deadlineMs: number,
  ) {}

  register(record: InteractionRecord): void {
    this.byId.set(record.id, record);
    this.byToken.set(record.token, record);
  }

  /** Stores a message the stand-in knows of (e.g. the message a button is on). */
  putMessage(message: MessagePayload, interactionId?: string): void {
    const stored: StoredMessage = { message, deleted: false };
    if (interactionId !== undefined) stored.interactionId = interactionId;
    this.messages.set(message.id, stored);
  }

  getMessage(id: string): MessagePayload | undefined {
    return this.messages.get(id)?.message;
  }

  /**
   * Lets go of these interactions and the messages made for them; a callback or webhook call for
   * one is then answered as for an interaction Discord no longer knows. Returns the records let go.
   */
  forget(ids: ReadonlySet<string>): InteractionRecord[] {
    const gone: InteractionRecord[] = [];
    for (const id of ids) {
      const record = this.byId.get(id);
      if (!record) continue;
      this.byId.delete(id);
      this.byToken.delete(record.token);
      record.waiters.close();
      record.responseWaiters.close();
      gone.push(record);
    }
    if (gone.length > 0) {
      for (const [messageId, stored] of this.messages) {
        if (stored.interactionId !== undefined && ids.has(stored.interactionId))
          this.messages.delete(messageId);
      }
    }
    return gone;
  }

  close(): void {
    for (const record of this.byId.values()) {
      record.waiters.close();
      record.responseWaiters.close();
    }
  }

  // -- interaction callback ---------------------------------------------------------------------

  callback(
    id: string,
    token: string,
    body: unknown,
    withResponse: boolean,
    at: number,
    files: FileInfo[],
  ): RouteResult {
    const record = this.byId.get(id);
    if (!record || record.token !== token) return errors.unknownInteraction();
    if (record.ack) return errors.alreadyAcknowledged();
    if (at - record.sentAt > this.deadlineMs) return errors.unknownInteraction();
    if (!isRecord(body) || typeof body.type !== 'number') {
      return errors.invalidForm({
        type: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      });
    }
    const type = body.type;
    const data = isRecord(body.data) ? body.data : undefined;
    const isComponent = record.type === 3;
    const allowed: number[] = [
      CallbackType.ChannelMessageWithSource,
      CallbackType.DeferredChannelMessageWithSource,
      CallbackType.Modal,
      CallbackType.LaunchActivity,
    ];
    if (isComponent) allowed.push(CallbackType.DeferredMessageUpdate, CallbackType.UpdateMessage);
    if (record.type === 4) allowed.splice(0, allowed.length, CallbackType.AutocompleteResult);
    // A modal submit cannot be answered with another modal.
    if (record.type === 5) allowed.splice(allowed.indexOf(CallbackType.Modal), 1);
    if (!allowed.includes(type)) {
      return errors.invalidForm({
        type: {
          _errors: [
            { code: 'INTERACTION_RESPONSE_TYPE_INVALID', message: 'Invalid interaction response type' },
          ],
        },
      });
    }

    if (type === CallbackType.Modal) {
      const invalid = modalErrors(data);
      if (invalid.length > 0) {
        return errors.invalidForm({
          data: { _errors: invalid.map((message) => ({ code: 'MODAL_INVALID', message })) },
        });
      }
    }

    if (type === CallbackType.AutocompleteResult) {
      const invalid = validateChoices(data?.choices);
      if (invalid) return invalid;
    }

    if (type === CallbackType.ChannelMessageWithSource || type === CallbackType.UpdateMessage) {
      if (!data && type === CallbackType.ChannelMessageWithSource) return errors.emptyMessage();
      if (data) {
        const edited =
          type === CallbackType.UpdateMessage && record.componentMessageId !== undefined
            ? this.messages.get(record.componentMessageId)?.message
            : undefined;
        const invalid = validateMessage(data, ['data'], edited ? { files, existing: edited } : { files });
        if (invalid) return invalid;
      }
    }
    if (type === CallbackType.DeferredChannelMessageWithSource) {
      const invalid = deferredFlagsError(data);
      if (invalid) return invalid;
    }

    switch (type) {
      case CallbackType.ChannelMessageWithSource: {
        const msgData = data ?? {};
        const attachments = attachmentsFor(files);
        if (!hasVisibleContent({ ...msgData, attachments })) return errors.emptyMessage();
        const message = this.#newInteractionMessage(record, msgData, attachments, false);
        record.originalId = message.id;
        break;
      }
      case CallbackType.DeferredChannelMessageWithSource: {
        const flags = typeof data?.flags === 'number' ? data.flags & MessageFlag.Ephemeral : 0;
        const message = this.#newInteractionMessage(record, { flags }, [], true);
        record.originalId = message.id;
        break;
      }
      case CallbackType.DeferredMessageUpdate: {
        if (record.componentMessageId !== undefined) record.originalId = record.componentMessageId;
        break;
      }
      case CallbackType.UpdateMessage: {
        if (record.componentMessageId !== undefined) {
          record.originalId = record.componentMessageId;
          const stored = this.messages.get(record.componentMessageId);
          if (stored && data) {
            const result = applyEdit(stored.message, data, attachmentsFor(files));
            if (result) return result;
          }
        }
        break;
      }
      default:
        break;
    }

    const response: InteractionResponseRecord = { type, at };
    if (body.data !== undefined) response.data = body.data;
    record.ack = response;
    record.responseWaiters.notify(response);

    if (!withResponse) return { status: 204 };
    const original = record.originalId ? this.messages.get(record.originalId)?.message : undefined;
    const interaction: Record<string, unknown> = { id: record.id, type: record.type };
    if (original && type !== CallbackType.DeferredMessageUpdate) {
      interaction.response_message_id = original.id;
      interaction.response_message_loading = (original.flags & MessageFlag.Loading) !== 0;
      interaction.response_message_ephemeral = (original.flags & MessageFlag.Ephemeral) !== 0;
    }
    const resource: Record<string, unknown> = { type };
    if (original && type !== CallbackType.DeferredMessageUpdate) resource.message = structuredClone(original);
    return { status: 200, body: { interaction, resource } };
  }

  #newInteractionMessage(
    record: InteractionRecord,
    data: Record<string, unknown>,
    attachments: unknown[],
    loading: boolean,
  ): MessagePayload {
    const flags =
      (typeof data.flags === 'number' ? data.flags & SETTABLE_FLAGS : 0) |
      (loading ? MessageFlag.Loading : 0);
    const isCommand = record.type === 2;
    const message = makeMessage({
      channelId: record.channelId,
      author: this.botUser,
      content: typeof data.content === 'string' ? data.content : '',
      embeds: Array.isArray(data.embeds) ? data.embeds.map(normalizeEmbed) : [],
      components: Array.isArray(data.components) ? structuredClone(data.components) : [],
      flags,
      type: isCommand ? 20 : 0,
      applicationId: this.applicationId,
    });
    message.attachments = attachments;
    if (data.tts === true) message.tts = true;
    message.interaction_metadata = this.#metadata(record);
    if (isCommand) {
      message.interaction = {
        id: record.id,
        type: record.type,
        name: String(record.payload.data.name ?? ''),
        user: record.user,
      };
    }
    this.putMessage(message, record.id);
    return message;
  }

  #metadata(record: InteractionRecord): Record<string, unknown> {
    const meta: Record<string, unknown> = {
      id: record.id,
      type: record.type,
      user: record.user,
      authorizing_integration_owners: record.payload.authorizing_integration_owners,
    };
    if (record.type === 2) {
      meta.name = record.payload.data.name;
      meta.command_type = record.payload.data.type;
    }
    if (record.type === 3 && record.componentMessageId !== undefined) {
      meta.interacted_message_id = record.componentMessageId;
    }
    return meta;
  }

  // -- webhook routes ------------------------------------------------------------------------------

  webhookRecord(appId: string, token: string): InteractionRecord | undefined {
    if (appId !== this.applicationId) return undefined;
    return this.byToken.get(token);
  }

  #resolveMessageId(record: InteractionRecord, messageId: string): string | undefined {
    if (messageId === '@original') return record.originalId;
    const owned =
      messageId === record.originalId ||
      messageId === record.componentMessageId ||
      record.followUpIds.includes(messageId);
    return owned ? messageId : undefined;
  }

  getWebhookMessage(record: InteractionRecord, messageId: string): RouteResult {
    const id = this.#resolveMessageId(record, messageId);
    const stored = id === undefined ? undefined : this.messages.get(id);
    if (!stored || stored.deleted) return errors.unknownMessage();
    return { status: 200, body: structuredClone(stored.message) };
  }

  editWebhookMessage(
    record: InteractionRecord,
    messageId: string,
    body: unknown,
    files: FileInfo[],
  ): RouteResult {
    const id = this.#resolveMessageId(record, messageId);
    const stored = id === undefined ? undefined : this.messages.get(id);
    if (!stored || stored.deleted) return errors.unknownMessage();
    const patch = isRecord(body) ? body : {};
    const invalid = validateMessage(patch, [], { files, existing: stored.message });
    if (invalid) return invalid;
    const result = applyEdit(stored.message, patch, attachmentsFor(files));
    if (result) return result;
    return { status: 200, body: structuredClone(stored.message) };
  }

  deleteWebhookMessage(record: InteractionRecord, messageId: string): RouteResult {
    const id = this.#resolveMessageId(record, messageId);
    const stored = id === undefined ? undefined : this.messages.get(id);
    if (!stored || stored.deleted) return errors.unknownMessage();
    stored.deleted = true;
    return { status: 204 };
  }

  followUp(record: InteractionRecord, body: unknown, wait: boolean, files: FileInfo[]): RouteResult {
    if (!record.ack) return errors.unknownWebhook();
    const data = isRecord(body) ? body : {};
    const invalid = validateMessage(data, [], { files });
    if (invalid) return invalid;
    const attachments = attachmentsFor(files);
    if (!hasVisibleContent({ ...data, attachments })) return errors.emptyMessage();
    const message = this.#newInteractionMessage(record, data, attachments, false);
    if (record.originalId !== undefined && message.interaction_metadata) {
      message.interaction_metadata.original_response_message_id = record.originalId;
    }
    record.followUpIds.push(message.id);
    return wait ? { status: 200, body: structuredClone(message) } : { status: 204 };
  }

  // -- handle ----------------------------------------------------------------------------------------

  view(record: InteractionRecord): InteractionView {
    const viewOf = (id: string): ViewedMessage | undefined => {
      const stored = this.messages.get(id);
      if (!stored) return undefined;
      const m = stored.message;
      return {
        id: m.id,
        content: m.content,
        embeds: structuredClone(m.embeds),
        components: structuredClone(m.components),
        flags: m.flags,
        deleted: stored.deleted,
      };
    };
    const originalId = record.originalId ?? record.componentMessageId;
    const view: InteractionView = { followUps: [] };
    if (originalId !== undefined) {
      const original = viewOf(originalId);
      if (original) view.original = original;
    }
    for (const id of record.followUpIds) {
      const m = viewOf(id);
      if (m) view.followUps.push(m);
    }
    return view;
  }

  handle(record: InteractionRecord, defaultTimeoutMs: number): InteractionHandle {
    const store = this;
    return {
      id: record.id,
      token: record.token,
      sentAt: record.sentAt,
      shardId: record.shardId,
      get delivery() {
        return record.delivery;
      },
      payload: record.payload as unknown as Record<string, unknown>,
      firstResponse(timeoutMs = defaultTimeoutMs) {
        const existing = record.ack ? [record.ack] : [];
        return record.responseWaiters.wait(
          () => true,
          timeoutMs,
          `the response to interaction ${record.id}`,
          existing,
        );
      },
      requests() {
        return [...record.requests];
      },
      waitFor(pred, timeoutMs = defaultTimeoutMs) {
        return record.waiters.wait(
          pred,
          timeoutMs,
          `a request for interaction ${record.id}`,
          record.requests,
        );
      },
      view() {
        return store.view(record);
      },
    };
  }
}

export function newInteractionRecord(
  payload: InteractionPayload,
  user: UserFixture,
  shardId: number,
): InteractionRecord {
  return {
    id: payload.id,
    token: payload.token,
    type: payload.type,
    payload,
    user,
    channelId: payload.channel_id,
    shardId,
    sentAt: performance.now(),
    delivery: 'dropped',
    followUpIds: [],
    requests: [],
    waiters: new WaitList<RecordedRestRequest>(),
    responseWaiters: new WaitList<InteractionResponseRecord>(),
  };
}

export function normalizeEmbed(embed: unknown): unknown {
  if (!isRecord(embed)) return embed;
  const out: Record<string, unknown> = { type: 'rich', ...structuredClone(embed) };
  if (typeof out.color === 'number' && !Number.isInteger(out.color)) out.color = Math.floor(out.color);
  return out;
}

export function attachmentsFor(files: FileInfo[]): unknown[] {
  return files.map((f) => {
    const id = snowflake();
    return {
      id,
      filename: f.filename,
      size: f.size,
      url: `https://cdn.discordapp.com/attachments/0/${id}/${f.filename}`,
      proxy_url: `https://media.discordapp.net/attachments/0/${id}/${f.filename}`,
      content_type: f.contentType,
    };
  });
}

/** Applies an edit in place; returns an error result when the edit would leave the message empty. */
function applyEdit(
  message: MessagePayload,
  patch: Record<string, unknown>,
  newFiles: unknown[],
): RouteResult | null {
  const next: MessagePayload = structuredClone(message);
  if ('content' in patch) next.content = typeof patch.content === 'string' ? patch.content : '';
  if ('embeds' in patch) next.embeds = Array.isArray(patch.embeds) ? patch.embeds.map(normalizeEmbed) : [];
  if ('components' in patch)
    next.components = Array.isArray(patch.components) ? structuredClone(patch.components) : [];
  if ('attachments' in patch) {
    // Keeps listed existing attachments (by id); new uploads are appended.
    const keep = Array.isArray(patch.attachments)
      ? patch.attachments.filter(isRecord).map((a) => String(a.id))
      : [];
    next.attachments = message.attachments.filter((a) => isRecord(a) && keep.includes(String(a.id)));
  }
  next.attachments = [...next.attachments, ...newFiles];
  if (typeof patch.flags === 'number') {
    next.flags = (next.flags & ~EDITABLE_FLAGS) | (patch.flags & EDITABLE_FLAGS);
  }
  const wasLoading = (next.flags & MessageFlag.Loading) !== 0;
  next.flags &= ~MessageFlag.Loading;
  if (!hasVisibleContent(next)) return errors.emptyMessage();
  if (!wasLoading) next.edited_timestamp = new Date().toISOString();
  Object.assign(message, next);
  return null;
}

/**
 * An autocomplete answer's choices as Discord checks them: at most 25, each a name of 1 to 100
 * characters and a value (a string of at most 100 characters, or a number).
 */
function validateChoices(choices: unknown): RouteResult | undefined {
  // Discord's error tree nests by path: { data: { choices: { 0: { name: { _errors } } } } }.
  const problem = (path: string, code: string, message: string): RouteResult =>
    errors.invalidForm(
      path.split('.').reduceRight<Record<string, unknown>>((tree, key) => ({ [key]: tree }), {
        _errors: [{ code, message }],
      }),
    );
  if (!Array.isArray(choices)) return problem('data.choices', 'BASE_TYPE_REQUIRED', 'This field is required');
  if (choices.length > 25) {
    return problem('data.choices', 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  }
  for (const [i, entry] of choices.entries()) {
    const name = isRecord(entry) ? entry.name : undefined;
    const value = isRecord(entry) ? entry.value : undefined;
    if (typeof name !== 'string' || name.length < 1 || name.length > 100) {
      return problem(
        `data.choices.${i}.name`,
        'BASE_TYPE_BAD_LENGTH',
        'Must be between 1 and 100 in length.',
      );
    }
    if (typeof value === 'string' ? value.length > 100 : typeof value !== 'number') {
      return problem(`data.choices.${i}.value`, 'BASE_TYPE_BAD_LENGTH', 'Must be 100 or fewer in length.');
    }
  }
  return undefined;
}

// Modal submits (interaction type 5) as Discord sends them for a modal of Label components
// (2025): each Label comes back with its child's `values` (selects) or `value` (a text input), and
// the channels and roles chosen in `data.resolved`. What a user fills in is checked against the
// modal the bot showed, as Discord's client enforces it (a required field left empty, more values
// than `max_values`, an option not offered, a channel of a type not allowed, a text over
// `max_length`): such a submit cannot happen, so building one throws (a test's mistake).

import type {
  APILabelComponent,
  APIModalInteractionResponseCallbackData,
  APISelectMenuDefaultValue,
} from 'discord-api-types/v10';
import {
  channelPermissionsOf,
  type GuildFixture,
  type InteractionBaseInput,
  InteractionKind,
  type InteractionPayload,
  interactionBase,
} from './fixtures.js';

/** What the user filled in, by the field's custom_id: the values of a select, the text of an input. */
export type ModalAnswers = Readonly<Record<string, string | readonly string[]>>;

export interface ModalSubmitInput extends InteractionBaseInput {
  /** The modal the bot showed (the `data` of its callback of type 9). */
  modal: APIModalInteractionResponseCallbackData;
  /** Fields not answered keep what the modal filled in (default_values, value). */
  answers: ModalAnswers;
}

const Type = {
  StringSelect: 3,
  TextInput: 4,
  UserSelect: 5,
  RoleSelect: 6,
  MentionableSelect: 7,
  ChannelSelect: 8,
  Label: 18,
} as const;

type Field = APILabelComponent['component'];

function fail(customId: string, why: string): never {
  throw new Error(`Discord stand-in: modal field ${customId} cannot be submitted: ${why}`);
}

function defaults(field: Field): string[] {
  if ('default_values' in field && Array.isArray(field.default_values)) {
    return (field.default_values as APISelectMenuDefaultValue<never>[]).map((d) => d.id);
  }
  if (field.type === Type.StringSelect) return field.options.filter((o) => o.default).map((o) => o.value);
  return [];
}

/** The submitted form of one field, checked; resolved channels and roles added to `resolved`. */
function submitted(
  field: Field,
  answer: string | readonly string[] | undefined,
  guild: GuildFixture | undefined,
  input: ModalSubmitInput,
  resolved: { channels: Record<string, unknown>; roles: Record<string, unknown> },
): Record<string, unknown> {
  const customId = field.custom_id;
  const base = { type: field.type, id: field.id ?? 0, custom_id: customId };
  if (field.type === Type.TextInput) {
    const value = typeof answer === 'string' ? answer : (field.value ?? '');
    if (field.required !== false && value === '') fail(customId, 'required and empty');
    if (field.max_length !== undefined && value.length > field.max_length) fail(customId, 'over max_length');
    if (value !== '' && field.min_length !== undefined && value.length < field.min_length) {
      fail(customId, 'under min_length');
    }
    return { ...base, value };
  }
  const values = answer === undefined ? defaults(field) : typeof answer === 'string' ? [answer] : [...answer];
  const min = 'min_values' in field && field.min_values !== undefined ? field.min_values : 1;
  const max = 'max_values' in field && field.max_values !== undefined ? field.max_values : 1;
  const required = 'required' in field ? field.required !== false : true;
  if (values.length > max) fail(customId, `more than ${max} values`);
  if (values.length < (required ? Math.max(min, 1) : min) && !(values.length === 0 && !required)) {
    fail(customId, `fewer than ${min} values`);
  }
  if (field.type === Type.StringSelect) {
    for (const value of values) {
      if (!field.options.some((o) => o.value === value)) fail(customId, `${value} is not offered`);
    }
  } else if (field.type === Type.ChannelSelect) {
    for (const id of values) {
      const channel = guild?.channels.find((c) => c.id === id);
      if (!guild || !channel) fail(customId, `unknown channel ${id}`);
      if (field.channel_types && !field.channel_types.includes(channel.type)) {
        fail(customId, `channel type ${channel.type} not allowed`);
      }
      const { permission_overwrites: _o, ...fields } = channel;
      resolved.channels[id] = {
        ...fields,
        guild_id: guild.id,
        permissions: channelPermissionsOf(input, guild, channel),
      };
    }
  } else if (field.type === Type.RoleSelect) {
    for (const id of values) {
      const role = guild?.roles.find((r) => r.id === id);
      if (!role) fail(customId, `unknown role ${id}`);
      resolved.roles[id] = { ...role };
    }
  } else {
    fail(customId, `component type ${field.type} is not supported by the stand-in`);
  }
  return { ...base, values };
}

/** The INTERACTION_CREATE of a modal submit for `input.modal`, filled in with `input.answers`. */
export function makeModalSubmit(input: ModalSubmitInput): InteractionPayload {
  const resolved = { channels: {} as Record<string, unknown>, roles: {} as Record<string, unknown> };
  const known = new Set<string>();
  const components = input.modal.components.map((component, index) => {
    if (component.type !== Type.Label) {
      throw new Error(`Discord stand-in: only Label components are submitted, not type ${component.type}`);
    }
    const field = component.component;
    known.add(field.custom_id);
    return {
      type: Type.Label,
      id: component.id ?? index + 1,
      component: submitted(field, input.answers[field.custom_id], input.guild, input, resolved),
    };
  });
  for (const customId of Object.keys(input.answers)) {
    if (!known.has(customId)) throw new Error(`Discord stand-in: the modal has no field ${customId}`);
  }
  const data: Record<string, unknown> = { custom_id: input.modal.custom_id, components };
  const kept = Object.fromEntries(Object.entries(resolved).filter(([, v]) => Object.keys(v).length > 0));
  if (Object.keys(kept).length > 0) data.resolved = kept;
  return interactionBase(input, InteractionKind.Modal, data);
}

/**
 * What Discord refuses in a modal callback (type 9) beyond its schema's fields: the title and
 * labels' lengths, 1 to 5 components, each a Label (an Action Row of text inputs is deprecated in
 * modals), no `label` on a text input inside a Label, default values within `max_values`, unique
 * custom_ids. The messages of the errors, like Discord's, name the offending path.
 */
export function modalErrors(data: unknown): string[] {
  const errors: string[] = [];
  if (typeof data !== 'object' || data === null) return ['data: required'];
  const modal = data as Partial<APIModalInteractionResponseCallbackData>;
  if (typeof modal.custom_id !== 'string' || modal.custom_id.length < 1 || modal.custom_id.length > 100) {
    errors.push('data.custom_id: 1 to 100 characters');
  }
  if (typeof modal.title !== 'string' || modal.title.length < 1 || modal.title.length > 45) {
    errors.push('data.title: 1 to 45 characters');
  }
  const components = Array.isArray(modal.components) ? modal.components : [];
  if (components.length < 1 || components.length > 5) errors.push('data.components: 1 to 5 components');
  const ids = new Set<string>();
  components.forEach((component, i) => {
    const at = `data.components.${i}`;
    if (component.type !== Type.Label) {
      errors.push(`${at}.type: a Label (18) expected`);
      return;
    }
    if (component.label.length < 1 || component.label.length > 45)
      errors.push(`${at}.label: 1 to 45 characters`);
    if (component.description !== undefined && component.description.length > 100) {
      errors.push(`${at}.description: at most 100 characters`);
    }
    const field = component.component;
    if (ids.has(field.custom_id)) errors.push(`${at}.component.custom_id: duplicate`);
    ids.add(field.custom_id);
    if (field.type === Type.TextInput && 'label' in field && field.label !== undefined) {
      errors.push(`${at}.component.label: not allowed inside a Label`);
    }
    const max = 'max_values' in field && field.max_values !== undefined ? field.max_values : 1;
    if (defaults(field).length > max) errors.push(`${at}.component.default_values: more than max_values`);
    if (field.type === Type.StringSelect && (field.options.length < 1 || field.options.length > 25)) {
      errors.push(`${at}.component.options: 1 to 25 options`);
    }
  });
  return errors;
}

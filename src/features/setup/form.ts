/**
 * The /setup form: one modal of Discord's Label components (2025) holding what a server needs
 * first, each filled in with what is set now: the reminder channel (a channel select), the role to
 * ping (a role select), the language of public messages and the digest (string selects), and the
 * time zone (a text input). What comes back is read here too, as untrusted input: an answer that
 * is not what the form asked (a field missing, an id that is not one, a value not offered) is
 * refused whole, and nothing is changed.
 */
import {
  type APILabelComponent,
  type APIModalInteractionResponseCallbackData,
  ChannelType,
  ComponentType,
  type ModalSubmitInteraction,
  SelectMenuDefaultValueType,
  TextInputStyle,
} from 'discord.js';
import { isSnowflake } from '../../directory/index.js';
import type { Translate } from '../../i18n/index.js';
import { languageText } from '../../i18n/public-language.js';
import type { DigestPeriod, PublicLanguage } from '../../store/schema.js';
import type { GuildSettings } from '../../store/settings.js';
import { isPublicLanguage, PUBLIC_LANGUAGES } from '../settings/general.js';
import type { ResolvedChannel } from '../settings/settings.js';

/** The form's custom_id, and its fields'. */
export const SETUP_FORM_ID = 'setup';
export const FIELD = {
  channel: 'setup:channel',
  role: 'setup:role',
  language: 'setup:language',
  timeZone: 'setup:timezone',
  digest: 'setup:digest',
} as const;

/** What the digest select offers: off, or a calendar period. */
const DIGEST_CHOICES = ['off', 'week', 'month'] as const;
type DigestChoice = (typeof DIGEST_CHOICES)[number];

/** The longest time zone name accepted (IANA's longest is about 30 characters). */
const TIME_ZONE_MAX = 64;
/** Discord's limits on a label and its description (checked, not trusted to the catalogs). */
const LABEL_MAX = 45;
const DESCRIPTION_MAX = 100;

const label = (
  t: Translate,
  key: string,
  component: APILabelComponent['component'],
  described = true,
): APILabelComponent => ({
  type: ComponentType.Label,
  label: t(`${key}.label`).slice(0, LABEL_MAX),
  ...(described ? { description: t(`${key}.description`).slice(0, DESCRIPTION_MAX) } : {}),
  component,
});

/**
 * The form, filled in with `settings` as they are; the reminder channel defaults to `hereChannelId`
 * (where /setup was typed) when none is set and that channel is one the bot posts in.
 */
export function formOf(
  settings: GuildSettings,
  guildLocale: string | null,
  here: { channelId: string | null; postable: boolean },
  t: Translate,
): APIModalInteractionResponseCallbackData {
  const channelId =
    settings.reminderChannelId ?? (here.channelId !== null && here.postable ? here.channelId : null);
  const digest: DigestChoice = settings.digest?.period ?? 'off';
  return {
    custom_id: SETUP_FORM_ID,
    title: t('setup.modal.title').slice(0, LABEL_MAX),
    components: [
      label(t, 'setup.modal.channel', {
        type: ComponentType.ChannelSelect,
        custom_id: FIELD.channel,
        channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        min_values: 1,
        max_values: 1,
        required: true,
        ...(channelId
          ? { default_values: [{ id: channelId, type: SelectMenuDefaultValueType.Channel }] }
          : {}),
      }),
      label(t, 'setup.modal.role', {
        type: ComponentType.RoleSelect,
        custom_id: FIELD.role,
        min_values: 0,
        max_values: 1,
        required: false,
        ...(settings.reminderRoleId
          ? { default_values: [{ id: settings.reminderRoleId, type: SelectMenuDefaultValueType.Role }] }
          : {}),
      }),
      label(t, 'setup.modal.language', {
        type: ComponentType.StringSelect,
        custom_id: FIELD.language,
        min_values: 1,
        max_values: 1,
        required: true,
        options: PUBLIC_LANGUAGES.map((language) => ({
          label: languageText(language, guildLocale, t).slice(0, 100),
          value: language,
          default: language === settings.publicLanguage,
        })),
      }),
      label(t, 'setup.modal.timezone', {
        type: ComponentType.TextInput,
        custom_id: FIELD.timeZone,
        style: TextInputStyle.Short,
        required: false,
        max_length: TIME_ZONE_MAX,
        placeholder: t('setup.modal.timezone.placeholder'),
        ...(settings.timeZone ? { value: settings.timeZone } : {}),
      }),
      label(t, 'setup.modal.digest', {
        type: ComponentType.StringSelect,
        custom_id: FIELD.digest,
        min_values: 1,
        max_values: 1,
        required: true,
        options: DIGEST_CHOICES.map((choice) => ({
          label: t(`setup.modal.digest.${choice}`),
          value: choice,
          default: choice === digest,
        })),
      }),
    ],
  };
}

/** What the form came back with, checked. */
export interface SetupAnswers {
  channelId: string;
  /** What Discord resolved for the channel (its type and server), undefined when it did not. */
  resolvedChannel: ResolvedChannel | undefined;
  roleId: string | null;
  /** Whether anyone may ping the role (Discord's resolved role); undefined when not known. */
  roleMentionable: boolean | undefined;
  language: PublicLanguage;
  /** As typed, trimmed; null when left empty (the time zone stays as it is). */
  timeZone: string | null;
  digest: DigestPeriod | null;
}

interface SubmittedField {
  type: number;
  values?: readonly unknown[];
  value?: unknown;
  channels?: { get(id: string): unknown };
  roles?: { get(id: string): unknown };
}

function field(interaction: ModalSubmitInteraction, customId: string): SubmittedField | undefined {
  // discord.js's getters throw on a missing or mistyped field; the answer is untrusted, so it is
  // read as data and checked here.
  return interaction.fields.fields.get(customId) as SubmittedField | undefined;
}

function selected(found: SubmittedField | undefined, type: ComponentType, max: number): string[] | null {
  if (!found || found.type !== type || !Array.isArray(found.values) || found.values.length > max) return null;
  const values = found.values.filter((value): value is string => typeof value === 'string');
  return values.length === found.values.length ? values : null;
}

function resolvedChannelOf(found: SubmittedField, id: string): ResolvedChannel | undefined {
  const channel = found.channels?.get(id) as
    | { type?: unknown; guildId?: unknown; guild_id?: unknown }
    | undefined;
  if (!channel || typeof channel.type !== 'number') return undefined;
  const guildId = typeof channel.guildId === 'string' ? channel.guildId : channel.guild_id;
  return { type: channel.type, guildId: typeof guildId === 'string' ? guildId : undefined };
}

/** The form's answers, or null when they are not what the form asked. */
export function readSetupForm(interaction: ModalSubmitInteraction): SetupAnswers | null {
  const channelField = field(interaction, FIELD.channel);
  const channel = selected(channelField, ComponentType.ChannelSelect, 1);
  const role = selected(field(interaction, FIELD.role), ComponentType.RoleSelect, 1) ?? [];
  const language = selected(field(interaction, FIELD.language), ComponentType.StringSelect, 1);
  const digest = selected(field(interaction, FIELD.digest), ComponentType.StringSelect, 1);
  const zoneField = field(interaction, FIELD.timeZone);
  const channelId = channel?.[0];
  const roleId = role[0] ?? null;
  const chosenLanguage = language?.[0];
  const chosenDigest = digest?.[0];
  if (!channelField || !channelId || !isSnowflake(channelId)) return null;
  if (roleId !== null && !isSnowflake(roleId)) return null;
  if (!isPublicLanguage(chosenLanguage)) return null;
  if (!(DIGEST_CHOICES as readonly unknown[]).includes(chosenDigest)) return null;
  let timeZone: string | null = null;
  if (zoneField) {
    if (zoneField.type !== ComponentType.TextInput || typeof zoneField.value !== 'string') return null;
    const typed = zoneField.value.trim();
    if (typed.length > TIME_ZONE_MAX) return null;
    timeZone = typed === '' ? null : typed;
  }
  const resolvedRole =
    roleId === null
      ? undefined
      : (field(interaction, FIELD.role)?.roles?.get(roleId) as { mentionable?: unknown } | undefined);
  return {
    channelId,
    resolvedChannel: resolvedChannelOf(channelField, channelId),
    roleId,
    roleMentionable: typeof resolvedRole?.mentionable === 'boolean' ? resolvedRole.mentionable : undefined,
    language: chosenLanguage,
    timeZone,
    digest: chosenDigest === 'off' ? null : (chosenDigest as DigestPeriod),
  };
}

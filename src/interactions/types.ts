import type {
  ButtonInteraction,
  ChatInputCommandInteraction,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { DirectoryClient } from '../directory/client.js';
import type { UpJournal } from '../features/up/journal.js';
import type { SupportedLocale, Translate } from '../i18n/index.js';
import type { Logger } from '../log/logger.js';
import type { RenderedMessage } from '../render/message.js';

/** What handlers get instead of importing modules: our own boundaries, easy to fake in tests. */
export interface BotDeps {
  directory: DirectoryClient;
  logger: Logger;
  now: () => number;
  /** How long /up may spend gathering the guild's statistics before it goes without them. */
  gatherTimeoutMs: number;
  /** Ups in flight, so that a restart answers them (journal.ts). */
  journal: UpJournal;
  /**
   * The name of the channel an interaction came from, from the interaction's own payload
   * (`interaction.channel` is null: discord.js caches no channels for this bot).
   */
  channelName: (channelId: string) => string | undefined;
}

/** Sends the outcome: public (edit the deferred reply) or private (only the user sees it). */
export interface Responder {
  public(message: RenderedMessage): Promise<void>;
  private(message: RenderedMessage): Promise<void>;
}

export type Subject = 'bot' | 'server' | 'profile';

/** What a handler gets: the interaction, deferred already, and everything to answer it. */
export interface HandlerContext<I extends ChatInputCommandInteraction | ButtonInteraction> {
  interaction: I;
  deps: BotDeps;
  t: Translate;
  locale: SupportedLocale;
  reply: Responder;
  /** Directory calls must be done by then (ms epoch): the interaction can still be answered. */
  deadline: number;
}

export type CommandContext = HandlerContext<ChatInputCommandInteraction>;
export type ButtonContext = HandlerContext<ButtonInteraction>;

export interface SlashCommand {
  data: RESTPostAPIChatInputApplicationCommandsJSONBody;
  /** Defer privately: every outcome is for the invoking user only. */
  ephemeral?: boolean;
  /** Refuse outside a guild with a localized message. */
  guildOnly?: boolean;
  /** Which record a NotFound / bad reference is about, for the error message. */
  subject?: Subject;
  /** Returns the outcome for the log line (e.g. 'success', 'cooldown', 'shown'). */
  execute(ctx: CommandContext): Promise<string>;
}

export interface ButtonHandler {
  name: string;
  matches(customId: string): boolean;
  /** Whether the button edits the message it is on (deferUpdate) or opens a new private one. */
  mode(customId: string): 'update' | 'reply';
  subject?: Subject;
  execute(ctx: ButtonContext): Promise<string>;
}

export interface Registry {
  commands: readonly SlashCommand[];
  buttons: readonly ButtonHandler[];
}

/**
 * The command contract: what a slash command or a button handler is (commands/*.ts), and what it
 * gets to run. Handlers reach the outside only through `deps`.
 */
import type {
  AutocompleteInteraction,
  ButtonInteraction,
  ChatInputCommandInteraction,
  ModalSubmitInteraction,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
  RESTPostAPIContextMenuApplicationCommandsJSONBody,
  UserContextMenuCommandInteraction,
} from 'discord.js';
import type { DirectoryClient } from '../directory/index.js';
import type { CommandMentions } from '../discord/command-mentions.js';
import type { DiscordLookups } from '../discord/lookups.js';
import type { ChannelMessages } from '../discord/messages.js';
import type { ChannelPermissionsLookup } from '../discord/permissions.js';
import type { DiscordRoles } from '../discord/roles.js';
import type { DeferralRules } from '../gateway/deferral-rules.js';
import type { SupportedLocale, Translate } from '../i18n/index.js';
import type { Logger } from '../log/logger.js';
import type { ChartRenderer } from '../render/charts.js';
import type { RenderedMessage } from '../render/message.js';
import type { DigestRepository } from '../store/digests.js';
import type { HistoryRepository } from '../store/history.js';
import type { UpJournal } from '../store/journal.js';
import type { LiveBoardRepository } from '../store/live-boards.js';
import type { UpWatchRepository } from '../store/notifications.js';
import type { ReminderRepository } from '../store/reminders.js';
import type { RewardRepository } from '../store/rewards.js';
import type { GuildSettings, SettingsRepository } from '../store/settings.js';
import type { WebhookRepository } from '../store/webhooks.js';
import type { DescribeFailure, Subject } from './error-message.js';
import type { LookupSuggestions, Suggestion } from './suggestions.js';

export type { Subject };

/**
 * What the bot posts in a server on its own besides reminders: its digests and its live
 * leaderboard (features/digests), their stores, and how to tell their engines of a change.
 */
export interface ServerPosts {
  digests: DigestRepository;
  liveBoards: LiveBoardRepository;
  wakeDigests(dueAt: number): void;
  wakeLiveBoards(dueAt: number): void;
  /**
   * The server's digest as its settings now say (the period holding now, in its time zone): written
   * and its engine woken, or cancelled when it has none. Its time, or undefined.
   */
  planDigest(settings: GuildSettings, now: number): Promise<number | undefined>;
  /**
   * An up was recorded: the server's live leaderboard is due a minute after its last edit at the
   * soonest. Never throws.
   */
  upRecorded(guildId: string, at: number): Promise<void>;
}

/**
 * What handlers get instead of importing modules: our own boundaries, easy to fake in tests.
 * Built once per process in app/deps.ts.
 */
export interface BotDeps {
  directory: DirectoryClient;
  /** What handlers read from Discord: guild statistics, a user's name, a guild's or channel's name. */
  discord: DiscordLookups;
  logger: Logger;
  now: () => number;
  /** Ups in flight, so that a restart answers them (store/journal.ts). */
  journal: UpJournal;
  /** Each server's settings (/settings), in the store. */
  settings: SettingsRepository;
  /** Each server's next-up reminder and members' personal ones, in the store. */
  reminders: ReminderRepository;
  /** Every successful up, for /leaderboard (store/history.ts). */
  history: HistoryRepository;
  /** Charts as PNG, drawn off the event loop (render/charts.ts). */
  charts: Pick<ChartRenderer, 'render'>;
  /**
   * Tells this process's reminder scheduler that a reminder now falls due at `dueAt` (ms epoch),
   * so one due sooner than its next look at the store is not late.
   */
  wakeReminders(dueAt: number): void;
  /**
   * The server was upped by `userId` at `at`: its posted reminder is edited to say so
   * (features/reminders/engines.ts). Never throws.
   */
  followUp(guildId: string, up: { userId: string; at: number }): Promise<number | undefined>;
  /**
   * Tells this process's watch of reminder roles (features/reminders/roles.ts) which role a
   * server's reminders mention now (null: none), so its deletion is noticed, even while offline.
   */
  reminderRoleChosen(guildId: string, roleId: string | null): void;
  /** The server's digests and live leaderboard (/settings digest, /settings live-leaderboard). */
  posts: ServerPosts;
  /** The server's reward roles (/settings rewards), in the store. */
  rewards: RewardRepository;
  /**
   * An up was recorded (the bot's /up, the directory's webhook): what follows from it is told (the
   * live leaderboard, reward roles). Never throws.
   */
  upRecorded(guildId: string, userId: string, at: number): Promise<void>;
  /** `</up:id>` mentions of the bot's commands, for the messages it posts on its own. */
  commands: CommandMentions;
  /** The messages the settings handlers post and delete in a channel (discord/messages.ts). */
  messages: ChannelMessages;
  /** The bot's permissions in a channel, read when a post is refused (discord/permissions.ts). */
  permissions: ChannelPermissionsLookup;
  /** Members' roles: given, taken, checked (discord/roles.ts). */
  roles: DiscordRoles;
  /** Each server's set-up of the directory's webhook (/settings webhook), in the store. */
  webhooks: WebhookRepository;
  /** Whether the bot receives webhooks (WEBHOOK_PORT), and at which public address (PUBLIC_URL). */
  webhookReceiver: { listening: boolean; publicUrl: string | undefined };
  /** What /bot and /server suggest as the user types (interactions/suggestions.ts). */
  suggestions: LookupSuggestions;
  /**
   * API v3 with a v2 key that can still raise servers (DIRECTORY_UP_TOKEN): /up raises through it.
   * Undefined: /up on v3 sends the member to the directory's page.
   */
  upDirectory?: DirectoryClient | undefined;
  /** v3: the /up answers waiting for the notification of their up (store/notifications.ts). */
  upWatches?: Pick<UpWatchRepository, 'add'> | undefined;
  /** v3: whether the directory's notifications reach this bot (its WebSocket, or a server's webhook). */
  notificationsOn?: boolean | undefined;
}

/** An autocomplete interaction (the user typing an option): answered from memory, never deferred. */
export interface AutocompleteContext {
  interaction: AutocompleteInteraction;
  deps: BotDeps;
  t: Translate;
}

/** Sends the outcome: public (edit the deferred reply) or private (only the user sees it). */
export interface Responder {
  public(message: RenderedMessage): Promise<void>;
  private(message: RenderedMessage): Promise<void>;
}

/** What a handler gets: the interaction, deferred already, and everything to answer it. */
/** What the router hands to a handler. */
export type HandledInteractionKind =
  | ChatInputCommandInteraction
  | UserContextMenuCommandInteraction
  | ButtonInteraction
  | ModalSubmitInteraction;

export interface HandlerContext<I extends HandledInteractionKind> {
  interaction: I;
  deps: BotDeps;
  t: Translate;
  locale: SupportedLocale;
  reply: Responder;
  /** Directory calls must be done by then (ms epoch): the interaction can still be answered. */
  deadline: number;
}

export type CommandContext = HandlerContext<ChatInputCommandInteraction>;
export type UserCommandContext = HandlerContext<UserContextMenuCommandInteraction>;
export type ButtonContext = HandlerContext<ButtonInteraction>;
/** A submitted form (modal), deferred privately: what was filled in is for the one who filled it. */
export type ModalContext = HandlerContext<ModalSubmitInteraction>;

/** How the router tells a handler's failure to the user. */
interface FailureWording {
  /** Which record a NotFound / bad reference is about, for the default error message. */
  subject?: Subject;
  /**
   * The handler's own wording of its failures (log level, code and answer); default: the
   * error vocabulary of error-message.ts, about `subject`.
   */
  describeFailure?: DescribeFailure;
}

export interface SlashCommand extends FailureWording {
  /** Its definition; whether it answers privately is stated beside it (the registry's `deferrals`). */
  data: RESTPostAPIChatInputApplicationCommandsJSONBody;
  /** Refuse outside a guild with a localized message. */
  guildOnly?: boolean;
  /** Returns the outcome for the log line (e.g. 'success', 'cooldown', 'shown'). */
  execute(ctx: CommandContext): Promise<string>;
  /** The choices for the option being typed (at most 25); from memory, at once. */
  autocomplete?(ctx: AutocompleteContext): Suggestion[];
}

/** A command of the context menu on a member (Apps › …). Its answers are private. */
export interface UserCommand extends FailureWording {
  data: RESTPostAPIContextMenuApplicationCommandsJSONBody;
  execute(ctx: UserCommandContext): Promise<string>;
}

export interface ButtonHandler extends FailureWording {
  name: string;
  matches(customId: string): boolean;
  /**
   * Whether the button edits the message it is on (deferUpdate), opens a new private one, or opens
   * a form (a modal: not deferred, the handler shows it).
   */
  mode(customId: string): 'update' | 'reply' | 'form';
  execute(ctx: ButtonContext): Promise<string>;
}

/** A form's submit (a modal the bot opened), by its custom_id. Deferred privately. */
export interface ModalHandler extends FailureWording {
  name: string;
  matches(customId: string): boolean;
  execute(ctx: ModalContext): Promise<string>;
}

export interface Registry {
  commands: readonly SlashCommand[];
  /** The context menu's commands on a member; none when left out. */
  userCommands?: readonly UserCommand[];
  buttons: readonly ButtonHandler[];
  /** The forms' submits; none when left out. */
  modals?: readonly ModalHandler[];
  /**
   * How each command's first answer is deferred, by name (commands/definitions.ts states it beside
   * each definition); the gateway's thread and the router decide from it alike.
   */
  deferrals: DeferralRules;
}

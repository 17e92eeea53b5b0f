/**
 * The interaction router: finds the handler in the explicit registry, acknowledges at once
 * (every command calls the directory and Discord allows 3 s before the first response; with an
 * acknowledger, from the gateway packet before discord.js builds the interaction), runs
 * the handler with its deps, turns every error into one localized private answer (worded by the
 * handler's describeFailure, else by error-message.ts), and writes one log line per interaction. It never throws: a failing handler or an expired interaction
 * ends in a log line, not in an unhandled rejection.
 */
import {
  type AutocompleteInteraction,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  ComponentType,
  type Interaction,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  type UserContextMenuCommandInteraction,
} from 'discord.js';
import { type InteractionAcknowledger, markDeferred } from '../gateway/acknowledge.js';
import {
  applicationCommandDeferral,
  commandDeferral,
  type Deferral,
  type InteractionPacket,
  rulesOf,
} from '../gateway/deferral-rules.js';
import { resolveLocale, translator } from '../i18n/index.js';
import { customIdPrefix } from '../render/custom-id.js';
import { NO_MENTIONS } from '../render/mentions.js';
import type { RenderedMessage } from '../render/message.js';
import { doneWithin } from '../time/bounded.js';
import { annotate } from '../trace/spans.js';
import { describeFailure, GuildOnlyError } from './error-message.js';
import { privateFollowUp, responderFor } from './respond.js';
import { inInteractionSpan } from './traced.js';
import type {
  BotDeps,
  ButtonHandler,
  CommandContext,
  HandledInteractionKind,
  HandlerContext,
  Registry,
  Responder,
  SlashCommand,
  UserCommand,
} from './types.js';

/**
 * Interaction tokens last 15 minutes; a directory call that would wait past 14 is refused at once
 * (the user is told when to try again) rather than left to answer a dead interaction.
 */
export const INTERACTION_DEADLINE_MS = 14 * 60_000;

/** One interaction handled: what the router logs and hands to its hook. */
export interface HandledInteraction {
  kind: 'command' | 'button' | 'autocomplete';
  name: string;
  outcome: string;
  durationMs: number;
}

export interface RouterHooks {
  /** Called once per interaction, after the answer (metrics). */
  onHandled?: (event: HandledInteraction) => void;
}

export interface Router {
  handle(interaction: Interaction): Promise<void>;
  /**
   * Sends the deferral of an interaction this router will handle, from its INTERACTION_CREATE
   * packet (`d`), before discord.js builds it; `handle` then waits for that instead of deferring.
   * Does nothing without an acknowledger. Never throws.
   */
  acknowledge(packet: unknown): void;
  /** Interactions being handled now (graceful shutdown waits for these). */
  readonly inFlight: number;
  /** Stop taking new interactions: they are told the bot is restarting. */
  close(): void;
  /** Resolves when nothing is in flight, or after `timeoutMs`; true when drained. */
  drain(timeoutMs: number): Promise<boolean>;
}

/** The part of the acknowledger the router uses. */
export type Acknowledger = Pick<InteractionAcknowledger, 'send' | 'take' | 'quiet'>;

const DEFER_REPLY = InteractionResponseType.DeferredChannelMessageWithSource;
/** How long an interaction's work may wait for other interactions' deferrals to go out. */
const QUIET_MAX_MS = 250;

export function createRouter(
  registry: Registry,
  deps: BotDeps,
  hooks: RouterHooks = {},
  acknowledger?: Acknowledger,
): Router {
  const commands = new Map<string, SlashCommand>(registry.commands.map((c) => [c.data.name, c]));
  const userCommands = new Map<string, UserCommand>(
    (registry.userCommands ?? []).map((c) => [c.data.name, c]),
  );
  const rules = rulesOf(registry.commands, registry.userCommands);
  let inFlight = 0;
  let closed = false;

  const findButton = (customId: string): ButtonHandler | undefined =>
    registry.buttons.find((b) => b.matches(customId));
  // Both edit a private message in place: the one the button is on, or a new one.
  const buttonDeferral = (handler: ButtonHandler, customId: string): Deferral =>
    handler.mode(customId) === 'update'
      ? { type: InteractionResponseType.DeferredMessageUpdate }
      : { type: DEFER_REPLY, ephemeral: true };

  /** What the packet will need as its deferral, or undefined when the router answers it otherwise. */
  function packetDeferral(packet: InteractionPacket): Deferral | undefined {
    const data = packet.data;
    if (packet.type === InteractionType.ApplicationCommand) return applicationCommandDeferral(packet, rules);
    if (packet.type === InteractionType.MessageComponent && data?.component_type === ComponentType.Button) {
      const customId = data.custom_id;
      const handler = typeof customId === 'string' ? findButton(customId) : undefined;
      return handler && typeof customId === 'string' ? buttonDeferral(handler, customId) : undefined;
    }
    return undefined;
  }

  function acknowledge(packet: unknown): void {
    if (!acknowledger || closed || typeof packet !== 'object' || packet === null) return;
    try {
      const { id, token } = packet as InteractionPacket;
      if (typeof id !== 'string' || typeof token !== 'string') return;
      const deferral = packetDeferral(packet as InteractionPacket);
      if (deferral) acknowledger.send(id, token, deferral);
    } catch (err) {
      // discord.js's deferral (in `defer`) still follows.
      deps.logger.warn({ err }, 'could not send a deferral from the gateway packet');
    }
  }

  /** The deferral sent from the packet, once it has gone through; else discord.js's. */
  async function defer(interaction: HandledInteractionKind, deferral: Deferral) {
    const sent = acknowledger?.take(interaction.id);
    if (sent) {
      await sent.done;
      markDeferred(interaction, sent.deferral);
      // Under a burst, the look-ups and the directory wait for the other deferrals to go out first.
      await acknowledger?.quiet(QUIET_MAX_MS);
    } else if (deferral.type === InteractionResponseType.DeferredMessageUpdate && interaction.isButton()) {
      await interaction.deferUpdate();
    } else {
      const privately = deferral.type === DEFER_REPLY && deferral.ephemeral;
      await interaction.deferReply(privately ? { flags: MessageFlags.Ephemeral } : {});
    }
  }

  /** A command no longer in the registry (deployed before, or by another version): said privately at once. */
  async function unknownCommand(
    interaction: ChatInputCommandInteraction | UserContextMenuCommandInteraction,
  ): Promise<{ name: string; outcome: string }> {
    await interaction.reply({
      content: translator(interaction.locale)('errors.unknownCommand'),
      flags: MessageFlags.Ephemeral,
      allowedMentions: NO_MENTIONS,
    });
    return { name: interaction.commandName, outcome: 'unknown' };
  }

  async function runCommand(
    interaction: ChatInputCommandInteraction,
  ): Promise<{ name: string; outcome: string }> {
    const name = interaction.commandName;
    const command = commands.get(name);
    if (!command) return unknownCommand(interaction);
    const privately = command.ephemeral === true;
    // Nothing before the deferral that can wait: under a burst, work done first delays it.
    await defer(interaction, commandDeferral(command.ephemeral === true));
    const execute = (context: CommandContext): Promise<string> => {
      if (command.guildOnly && !interaction.inGuild()) throw new GuildOnlyError();
      return command.execute(context);
    };
    const outcome = await run(interaction, responderFor(interaction, privately), execute, {
      kind: 'command',
      name,
      wording: command,
      answer: (message, reply) => reply.private(message),
    });
    return { name, outcome };
  }

  /** A command of the context menu on a member: always answered privately. */
  async function runUserCommand(
    interaction: UserContextMenuCommandInteraction,
  ): Promise<{ name: string; outcome: string }> {
    const name = interaction.commandName;
    const command = userCommands.get(name);
    if (!command) return unknownCommand(interaction);
    await defer(interaction, commandDeferral(true));
    const outcome = await run(interaction, responderFor(interaction, true), command.execute, {
      kind: 'command',
      name,
      wording: command,
      answer: (message, reply) => reply.private(message),
    });
    return { name, outcome };
  }

  async function runButton(interaction: ButtonInteraction): Promise<{ name: string; outcome: string }> {
    const handler = findButton(interaction.customId);
    if (!handler) {
      await interaction.reply({
        content: translator(interaction.locale)('errors.expired'),
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
      return { name: 'unknown-button', outcome: 'unknown' };
    }
    const deferral = buttonDeferral(handler, interaction.customId);
    const update = deferral.type === InteractionResponseType.DeferredMessageUpdate;
    await defer(interaction, deferral);
    const outcome = await run(interaction, responderFor(interaction, true), handler.execute, {
      kind: 'button',
      name: handler.name,
      wording: handler,
      // The message the button is on stays as it was; the error comes as a private follow-up.
      answer: (message, reply) => (update ? privateFollowUp(interaction, message) : reply.private(message)),
    });
    return { name: handler.name, outcome };
  }

  /**
   * Runs a deferred interaction's handler. An error becomes one log line and one localized
   * private answer; the outcome is the handler's, or `error:<code>`.
   */
  async function run<I extends HandledInteractionKind>(
    interaction: I,
    reply: Responder,
    execute: (context: HandlerContext<I>) => Promise<string>,
    failure: {
      kind: 'command' | 'button';
      name: string;
      wording: Pick<SlashCommand | UserCommand | ButtonHandler, 'subject' | 'describeFailure'>;
      answer: (message: RenderedMessage, reply: Responder) => Promise<unknown>;
    },
  ): Promise<string> {
    const t = translator(interaction.locale);
    try {
      return await execute({
        interaction,
        deps,
        t,
        locale: resolveLocale(interaction.locale),
        reply,
        deadline: interaction.createdTimestamp + INTERACTION_DEADLINE_MS,
      });
    } catch (err) {
      const { wording } = failure;
      const { described, message } =
        wording.describeFailure?.(err, t, deps.now()) ?? describeFailure(err, t, deps.now(), wording.subject);
      deps.logger[described.level](
        {
          err,
          [failure.kind]: failure.name,
          guildId: interaction.guildId,
          userId: interaction.user.id,
          code: described.code,
        },
        `${failure.kind} failed`,
      );
      await failure.answer(message, reply);
      return `error:${described.code}`;
    }
  }

  const drained: Array<() => void> = [];

  async function refuse(interaction: HandledInteractionKind): Promise<void> {
    const t = translator(interaction.locale);
    const message = { content: t('errors.restarting'), allowedMentions: NO_MENTIONS };
    try {
      // Deferred by the gateway's thread before it heard of the shutdown: the answer edits it.
      const sent = acknowledger?.take(interaction.id);
      if (sent) {
        await sent.done;
        markDeferred(interaction, sent.deferral);
        await interaction.editReply(message);
      } else {
        await interaction.reply({ ...message, flags: MessageFlags.Ephemeral });
      }
    } catch (err) {
      deps.logger.debug({ err }, 'could not answer an interaction during shutdown');
    }
  }

  /**
   * The user typing an option: the command's choices from memory, answered at once (no deferral
   * exists for it); nothing to answer when there are none or the bot is stopping. One debug line:
   * there is one of these per keystroke or so.
   */
  async function suggest(interaction: AutocompleteInteraction): Promise<void> {
    const started = deps.now();
    const name = interaction.commandName;
    const command = commands.get(name);
    let outcome = 'none';
    let choices: ReturnType<NonNullable<SlashCommand['autocomplete']>> = [];
    try {
      if (command?.autocomplete && !closed) {
        choices = command.autocomplete({ interaction, deps, t: translator(interaction.locale) });
        outcome = 'suggested';
      }
    } catch (err) {
      deps.logger.warn({ err, command: name }, 'autocomplete failed');
      outcome = 'failed';
    }
    try {
      await interaction.respond(choices);
    } catch (err) {
      deps.logger.debug({ err, command: name }, 'could not answer an autocomplete');
      outcome = 'unanswered';
    }
    const durationMs = deps.now() - started;
    deps.logger.debug({ name, choices: choices.length, outcome, durationMs }, 'autocomplete answered');
    annotate({ 'discord.interaction.outcome': outcome });
    hooks.onHandled?.({ kind: 'autocomplete', name: command ? name : 'unknown', outcome, durationMs });
  }

  /** One trace an interaction (interactions/traced.ts). */
  function handle(interaction: Interaction): Promise<void> {
    return inInteractionSpan(interaction, () => handleInSpan(interaction));
  }

  async function handleInSpan(interaction: Interaction): Promise<void> {
    if (interaction.isAutocomplete()) {
      await suggest(interaction);
      return;
    }
    if (
      !interaction.isChatInputCommand() &&
      !interaction.isUserContextMenuCommand() &&
      !interaction.isButton()
    ) {
      return;
    }
    if (closed) {
      await refuse(interaction);
      return;
    }
    const started = deps.now();
    const kind = interaction.isButton() ? 'button' : 'command';
    inFlight++;
    let name = interaction.isButton() ? customIdPrefix(interaction.customId) : interaction.commandName;
    let outcome = 'failed';
    try {
      const result = interaction.isChatInputCommand()
        ? await runCommand(interaction)
        : interaction.isUserContextMenuCommand()
          ? await runUserCommand(interaction)
          : await runButton(interaction);
      name = result.name;
      outcome = result.outcome;
    } catch (err) {
      // Discord refused our answer (expired token, unknown interaction, network): nothing more to say to the user.
      deps.logger.warn({ err, kind, name, guildId: interaction.guildId }, 'could not answer the interaction');
      outcome = 'unanswered';
    } finally {
      inFlight--;
      if (inFlight === 0) for (const resolve of drained.splice(0)) resolve();
    }
    const durationMs = deps.now() - started;
    deps.logger.info(
      { kind, name, guildId: interaction.guildId, userId: interaction.user.id, outcome, durationMs },
      'interaction handled',
    );
    annotate({ 'discord.interaction.outcome': outcome });
    hooks.onHandled?.({ kind, name: name ?? 'unknown', outcome, durationMs });
  }

  return {
    handle,
    acknowledge,
    get inFlight() {
      return inFlight;
    },
    close() {
      closed = true;
    },
    drain(timeoutMs) {
      if (inFlight === 0) return Promise.resolve(true);
      return doneWithin(new Promise<void>((resolve) => drained.push(resolve)), timeoutMs);
    },
  };
}

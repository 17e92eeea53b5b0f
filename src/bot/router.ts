/**
 * The interaction router: finds the handler in the explicit registry, acknowledges at once
 * (every command calls the directory and Discord allows 3 s before the first response), runs
 * the handler with its deps, turns every error into one localized private answer, and writes
 * one log line per interaction. It never throws: a failing handler or an expired interaction
 * ends in a log line, not in an unhandled rejection.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Interaction,
  MessageFlags,
} from 'discord.js';
import { resolveLocale, translator } from '../i18n/index.js';
import { describeError, errorMessage, GuildOnlyError } from './error-message.js';
import { NO_MENTIONS, responderFor } from './respond.js';
import type { BotDeps, ButtonHandler, Registry, SlashCommand } from './types.js';

/**
 * Interaction tokens last 15 minutes; a directory call that would wait past 14 is refused at once
 * (the user is told when to try again) rather than left to answer a dead interaction.
 */
export const INTERACTION_DEADLINE_MS = 14 * 60_000;

export interface RouterHooks {
  /** Called once per interaction, after the answer (metrics). */
  onHandled?: (event: {
    kind: 'command' | 'button';
    name: string;
    outcome: string;
    durationMs: number;
  }) => void;
}

export interface Router {
  handle(interaction: Interaction): Promise<void>;
  /** Interactions being handled now (graceful shutdown waits for these). */
  readonly inFlight: number;
  /** Stop taking new interactions: they are told the bot is restarting. */
  close(): void;
  /** Resolves when nothing is in flight, or after `timeoutMs`; true when drained. */
  drain(timeoutMs: number): Promise<boolean>;
}

export function createRouter(registry: Registry, deps: BotDeps, hooks: RouterHooks = {}): Router {
  const commands = new Map<string, SlashCommand>(registry.commands.map((c) => [c.data.name, c]));
  let inFlight = 0;

  async function runCommand(
    interaction: ChatInputCommandInteraction,
  ): Promise<{ name: string; outcome: string }> {
    const name = interaction.commandName;
    const command = commands.get(name);
    if (!command) {
      await interaction.reply({
        content: translator(interaction.locale)('errors.unknownCommand'),
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
      return { name, outcome: 'unknown' };
    }
    const privately = command.ephemeral === true;
    // Nothing before the deferral that can wait: under a burst, work done first delays it.
    await interaction.deferReply(privately ? { flags: MessageFlags.Ephemeral } : {});
    const t = translator(interaction.locale);
    const reply = responderFor(interaction, privately);
    try {
      if (command.guildOnly && !interaction.inGuild()) throw new GuildOnlyError();
      const outcome = await command.execute({
        interaction,
        deps,
        t,
        locale: resolveLocale(interaction.locale),
        reply,
        deadline: interaction.createdTimestamp + INTERACTION_DEADLINE_MS,
      });
      return { name, outcome };
    } catch (err) {
      const action = name === 'up' ? 'up' : undefined;
      const described = describeError(err, t, deps.now(), { subject: command.subject, action });
      deps.logger[described.level](
        {
          err,
          command: name,
          guildId: interaction.guildId,
          userId: interaction.user.id,
          code: described.code,
        },
        'command failed',
      );
      await reply.private(errorMessage(described, t, action));
      return { name, outcome: `error:${described.code}` };
    }
  }

  async function runButton(interaction: ButtonInteraction): Promise<{ name: string; outcome: string }> {
    const handler: ButtonHandler | undefined = registry.buttons.find((b) => b.matches(interaction.customId));
    if (!handler) {
      await interaction.reply({
        content: translator(interaction.locale)('errors.expired'),
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
      return { name: 'unknown-button', outcome: 'unknown' };
    }
    const update = handler.mode(interaction.customId) === 'update';
    if (update) await interaction.deferUpdate();
    else await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const t = translator(interaction.locale);
    // Both edit a private message in place: the one the button is on, or the new one.
    const reply = responderFor(interaction, true);
    try {
      const outcome = await handler.execute({
        interaction,
        deps,
        t,
        locale: resolveLocale(interaction.locale),
        reply,
        deadline: interaction.createdTimestamp + INTERACTION_DEADLINE_MS,
      });
      return { name: handler.name, outcome };
    } catch (err) {
      const described = describeError(err, t, deps.now(), { subject: handler.subject });
      deps.logger[described.level](
        {
          err,
          button: handler.name,
          guildId: interaction.guildId,
          userId: interaction.user.id,
          code: described.code,
        },
        'button failed',
      );
      const message = errorMessage(described, t);
      if (update) {
        await interaction.followUp({
          ...message,
          flags: MessageFlags.Ephemeral,
          allowedMentions: NO_MENTIONS,
        });
      } else {
        await reply.private(message);
      }
      return { name: handler.name, outcome: `error:${described.code}` };
    }
  }

  let closed = false;
  const drained: Array<() => void> = [];

  async function refuse(interaction: ChatInputCommandInteraction | ButtonInteraction): Promise<void> {
    const t = translator(interaction.locale);
    try {
      await interaction.reply({
        content: t('errors.restarting'),
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
    } catch (err) {
      deps.logger.debug({ err }, 'could not answer an interaction during shutdown');
    }
  }

  async function handle(interaction: Interaction): Promise<void> {
    if (!interaction.isChatInputCommand() && !interaction.isButton()) return;
    if (closed) {
      await refuse(interaction);
      return;
    }
    const started = deps.now();
    const kind = interaction.isChatInputCommand() ? 'command' : 'button';
    inFlight++;
    let name = interaction.isChatInputCommand()
      ? interaction.commandName
      : interaction.customId.split(':')[0];
    let outcome = 'failed';
    try {
      const result = interaction.isChatInputCommand()
        ? await runCommand(interaction)
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
    hooks.onHandled?.({ kind, name: name ?? 'unknown', outcome, durationMs });
  }

  return {
    handle,
    get inFlight() {
      return inFlight;
    },
    close() {
      closed = true;
    },
    drain(timeoutMs) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        drained.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}

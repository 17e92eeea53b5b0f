/**
 * The user typing an option: the command's choices from memory, answered at once (no deferral
 * exists for it); nothing to answer when there are none or the bot is stopping. One debug line:
 * there is one of these per keystroke or so.
 */
import type { AutocompleteInteraction } from 'discord.js';
import { translator } from '../../i18n/index.js';
import type { BotDeps, SlashCommand } from '../types.js';

export async function suggest(
  interaction: AutocompleteInteraction,
  command: SlashCommand | undefined,
  closed: boolean,
  deps: BotDeps,
): Promise<{ outcome: string; durationMs: number }> {
  const started = deps.now();
  const name = interaction.commandName;
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
  return { outcome, durationMs };
}

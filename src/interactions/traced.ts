/**
 * An interaction as a trace of its own (trace/spans.ts; nothing unless tracing is on): a SERVER
 * span named by its kind and name (`interaction command up`, `interaction button comments`), with
 * its id and server; the router adds its outcome. Its handler's store statements, directory and
 * Discord requests are spans inside it.
 */
import type { Interaction } from 'discord.js';
import { customIdPrefix } from '../render/custom-id.js';
import { inSpan, SpanKind } from '../trace/spans.js';

export function inInteractionSpan<T>(interaction: Interaction, run: () => Promise<T>): Promise<T> {
  const kind = interaction.isAutocomplete()
    ? 'autocomplete'
    : interaction.isButton()
      ? 'button'
      : interaction.isModalSubmit()
        ? 'modal'
        : 'command';
  const name =
    'customId' in interaction && (kind === 'button' || kind === 'modal')
      ? customIdPrefix(interaction.customId)
      : 'commandName' in interaction
        ? interaction.commandName
        : 'other';
  return inSpan(
    `interaction ${kind} ${name}`,
    {
      kind: SpanKind.SERVER,
      root: true,
      attributes: {
        'discord.interaction.kind': kind,
        'discord.interaction.name': name,
        'discord.interaction.id': interaction.id,
        ...(interaction.guildId ? { 'discord.guild.id': interaction.guildId } : {}),
      },
    },
    run,
  );
}

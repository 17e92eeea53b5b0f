/**
 * Which deferral a command's INTERACTION_CREATE packet gets (a slash command, or a user command of
 * the context menu on a member), decided from the packet alone and a table the commands' definitions
 * state (commands/definitions.ts): the router (main thread) and the gateway's thread
 * (gateway-thread.ts, which has no registry) take the same decision from the same table.
 *
 * Buttons are not in the table: a button's deferral is its handler's reading of the custom_id
 * (the comments pager edits its message, its "open" opens a private one), code that stays with
 * the handlers in the main thread.
 */
import { ApplicationCommandType, InteractionResponseType, InteractionType } from 'discord-api-types/v10';

/** What to send: a deferred reply (public or private), or a deferred update of a button's message. */
export type Deferral =
  | { type: InteractionResponseType.DeferredChannelMessageWithSource; ephemeral: boolean }
  | { type: InteractionResponseType.DeferredMessageUpdate };

/**
 * Command name → whether its answer is private, for slash commands and user commands (a context
 * menu on a member) apart. Plain data: it crosses to the gateway's thread.
 */
export interface DeferralRules {
  commands: Record<string, boolean>;
  userCommands: Record<string, boolean>;
  /**
   * Slash commands whose first answer is a form (a modal, /setup): never deferred, since a deferred
   * interaction can no longer open one. Not in `commands`, so the gateway's thread leaves them alone.
   */
  forms?: readonly string[];
}

/** The subset of an INTERACTION_CREATE packet read before discord.js has built the interaction. */
export interface InteractionPacket {
  id?: unknown;
  token?: unknown;
  type?: unknown;
  data?: { name?: unknown; type?: unknown; custom_id?: unknown; component_type?: unknown };
}

export function commandDeferral(ephemeral: boolean): Deferral {
  return { type: InteractionResponseType.DeferredChannelMessageWithSource, ephemeral };
}

/** The deferral of a slash command or a user command in the table; undefined for anything else. */
export function applicationCommandDeferral(
  packet: InteractionPacket,
  rules: DeferralRules,
): Deferral | undefined {
  const data = packet.data;
  if (packet.type !== InteractionType.ApplicationCommand) return undefined;
  const table =
    data?.type === ApplicationCommandType.ChatInput
      ? rules.commands
      : data?.type === ApplicationCommandType.User
        ? rules.userCommands
        : undefined;
  const name = data?.name;
  if (!table || typeof name !== 'string' || !Object.hasOwn(table, name)) return undefined;
  return commandDeferral(table[name] === true);
}

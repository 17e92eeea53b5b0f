/**
 * The router's first stage: which handler of the explicit registry an interaction is for (a slash
 * command or a user command by its name, a button or a form's submit by its custom_id). Undefined: none is (a command
 * deployed before or by another version, a button of an older message).
 */
import type { ButtonHandler, ModalHandler, Registry, SlashCommand, UserCommand } from '../types.js';

export interface Lookup {
  command(name: string): SlashCommand | undefined;
  userCommand(name: string): UserCommand | undefined;
  button(customId: string): ButtonHandler | undefined;
  modal(customId: string): ModalHandler | undefined;
}

/** The registry indexed once, when the router is made. */
export function lookupIn(registry: Registry): Lookup {
  const commands = new Map<string, SlashCommand>(registry.commands.map((c) => [c.data.name, c]));
  const userCommands = new Map<string, UserCommand>(
    (registry.userCommands ?? []).map((c) => [c.data.name, c]),
  );
  return {
    command: (name) => commands.get(name),
    userCommand: (name) => userCommands.get(name),
    button: (customId) => registry.buttons.find((b) => b.matches(customId)),
    modal: (customId) => registry.modals?.find((m) => m.matches(customId)),
  };
}

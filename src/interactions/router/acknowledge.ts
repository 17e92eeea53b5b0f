/**
 * The router's acknowledging stage: every command calls the directory and Discord allows 3 s
 * before the first response, so an interaction is deferred at once. With an acknowledger the
 * deferral goes out from the gateway packet, before discord.js builds the interaction; else
 * discord.js sends it. What a handler's deferral is (public, private, an update of the button's
 * message) is said here.
 */
import { ComponentType, InteractionResponseType, InteractionType, MessageFlags } from 'discord.js';
import { type InteractionAcknowledger, markDeferred } from '../../gateway/acknowledge.js';
import {
  applicationCommandDeferral,
  commandDeferral,
  type Deferral,
  type DeferralRules,
  type InteractionPacket,
} from '../../gateway/deferral-rules.js';
import type { Logger } from '../../log/logger.js';
import type { ButtonHandler, HandledInteractionKind, SlashCommand } from '../types.js';
import type { Lookup } from './lookup.js';

/** The part of the acknowledger the router uses. */
export type Acknowledger = Pick<InteractionAcknowledger, 'send' | 'take' | 'quiet'>;

const DEFER_REPLY = InteractionResponseType.DeferredChannelMessageWithSource;
/** How long an interaction's work may wait for other interactions' deferrals to go out. */
const QUIET_MAX_MS = 250;

/**
 * A slash command's deferral, as its definition states it (commands/definitions.ts); undefined for
 * a command that opens a form (its handler shows the modal instead).
 */
export function deferralFor(command: SlashCommand, rules: DeferralRules): Deferral | undefined {
  if (rules.forms?.includes(command.data.name)) return undefined;
  return commandDeferral(rules.commands[command.data.name] === true);
}

/** A form's submit: deferred privately (what was filled in is for the one who filled it). */
export const MODAL_DEFERRAL: Deferral = commandDeferral(true);

/** A command of the context menu on a member: always answered privately. */
export const USER_COMMAND_DEFERRAL: Deferral = commandDeferral(true);

/**
 * Both edit a private message in place: the one the button is on, or a new one. Undefined for a
 * button that opens a form (not deferred: its handler shows the modal).
 */
export function buttonDeferral(handler: ButtonHandler, customId: string): Deferral | undefined {
  const mode = handler.mode(customId);
  if (mode === 'form') return undefined;
  return mode === 'update'
    ? { type: InteractionResponseType.DeferredMessageUpdate }
    : { type: DEFER_REPLY, ephemeral: true };
}

/** Whether the deferral is a private reply (the handler's answers then edit it in place). */
export function isPrivateReply(deferral: Deferral): boolean {
  return deferral.type === DEFER_REPLY && deferral.ephemeral;
}

/** Whether the deferral is an update of the button's message (which then stays as it was). */
export function isMessageUpdate(deferral: Deferral): boolean {
  return deferral.type === InteractionResponseType.DeferredMessageUpdate;
}

/** What the packet will need as its deferral, or undefined when the router answers it otherwise. */
function packetDeferral(
  packet: InteractionPacket,
  rules: DeferralRules,
  lookup: Lookup,
): Deferral | undefined {
  const data = packet.data;
  if (packet.type === InteractionType.ApplicationCommand) return applicationCommandDeferral(packet, rules);
  if (packet.type === InteractionType.MessageComponent && data?.component_type === ComponentType.Button) {
    const customId = data.custom_id;
    const handler = typeof customId === 'string' ? lookup.button(customId) : undefined;
    return handler && typeof customId === 'string' ? buttonDeferral(handler, customId) : undefined;
  }
  if (packet.type === InteractionType.ModalSubmit) {
    const customId = data?.custom_id;
    return typeof customId === 'string' && lookup.modal(customId) ? MODAL_DEFERRAL : undefined;
  }
  return undefined;
}

/**
 * Sends the deferral of an INTERACTION_CREATE packet (`d`) the router will handle. Never throws:
 * when it cannot, discord.js's deferral (in `defer`) still follows.
 */
export function acknowledgePacket(
  packet: unknown,
  acknowledger: Acknowledger,
  rules: DeferralRules,
  lookup: Lookup,
  logger: Logger,
): void {
  if (typeof packet !== 'object' || packet === null) return;
  try {
    const { id, token } = packet as InteractionPacket;
    if (typeof id !== 'string' || typeof token !== 'string') return;
    const deferral = packetDeferral(packet as InteractionPacket, rules, lookup);
    if (deferral) acknowledger.send(id, token, deferral);
  } catch (err) {
    logger.warn({ err }, 'could not send a deferral from the gateway packet');
  }
}

/** The deferral sent from the packet, once it has gone through; else discord.js's. */
export async function defer(
  interaction: HandledInteractionKind,
  deferral: Deferral,
  acknowledger: Acknowledger | undefined,
): Promise<void> {
  const sent = acknowledger?.take(interaction.id);
  if (sent) {
    await sent.done;
    markDeferred(interaction, sent.deferral);
    // Under a burst, the look-ups and the directory wait for the other deferrals to go out first.
    await acknowledger?.quiet(QUIET_MAX_MS);
  } else if (isMessageUpdate(deferral) && interaction.isButton()) {
    await interaction.deferUpdate();
  } else {
    await interaction.deferReply(isPrivateReply(deferral) ? { flags: MessageFlags.Ephemeral } : {});
  }
}

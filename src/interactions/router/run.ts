/**
 * The router's running stage: a deferred interaction's handler, with its deps, its translator and
 * the deadline its directory calls must keep. An error becomes the failure's answer (fail.ts); the
 * outcome is the handler's, or `error:<code>`.
 */
import { resolveLocale, translator } from '../../i18n/index.js';
import type { BotDeps, HandledInteractionKind, HandlerContext, Responder } from '../types.js';
import { type Failure, fail } from './fail.js';

/**
 * Interaction tokens last 15 minutes; a directory call that would wait past 14 is refused at once
 * (the user is told when to try again) rather than left to answer a dead interaction.
 */
export const INTERACTION_DEADLINE_MS = 14 * 60_000;

export async function run<I extends HandledInteractionKind>(
  interaction: I,
  reply: Responder,
  execute: (context: HandlerContext<I>) => Promise<string>,
  failure: Failure,
  deps: BotDeps,
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
    return fail(err, interaction, failure, reply, t, deps);
  }
}

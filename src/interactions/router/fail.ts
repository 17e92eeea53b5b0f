/**
 * A handler's failure, told: one log line (its level and code from the handler's describeFailure,
 * else from error-message.ts) and one localized private answer. The outcome is `error:<code>`.
 */
import type { Translate } from '../../i18n/index.js';
import type { RenderedMessage } from '../../render/message.js';
import { describeFailure } from '../error-message.js';
import type {
  BotDeps,
  ButtonHandler,
  HandledInteractionKind,
  ModalHandler,
  Responder,
  SlashCommand,
  UserCommand,
} from '../types.js';

/** Who failed, and how its failure is worded and answered. */
export interface Failure {
  kind: 'command' | 'button' | 'modal';
  name: string;
  wording: Pick<SlashCommand | UserCommand | ButtonHandler | ModalHandler, 'subject' | 'describeFailure'>;
  answer: (message: RenderedMessage, reply: Responder) => Promise<unknown>;
}

export async function fail(
  err: unknown,
  interaction: HandledInteractionKind,
  failure: Failure,
  reply: Responder,
  t: Translate,
  deps: BotDeps,
): Promise<string> {
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

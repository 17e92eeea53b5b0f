/**
 * The interaction router, composed of its stages (router/): finds the handler in the explicit
 * registry (lookup.ts), acknowledges at once (acknowledge.ts: every command calls the directory
 * and Discord allows 3 s before the first response; with an acknowledger, from the gateway packet
 * before discord.js builds the interaction), refuses what it will not run (guard.ts), runs the
 * handler with its deps (run.ts), turns every error into one localized private answer (fail.ts,
 * worded by the handler's describeFailure, else by error-message.ts), answers autocompletes
 * (autocomplete.ts), counts what is in flight for the shutdown (drain.ts), and writes one log line
 * per interaction. It never throws: a failing handler or an expired interaction ends in a log
 * line, not in an unhandled rejection.
 */
import type {
  ButtonInteraction,
  ChatInputCommandInteraction,
  Interaction,
  ModalSubmitInteraction,
  UserContextMenuCommandInteraction,
} from 'discord.js';
import type { DeferralRules } from '../gateway/deferral-rules.js';
import { customIdPrefix } from '../render/custom-id.js';
import { annotate } from '../trace/spans.js';
import { privateFollowUp, responderFor, undeferredResponder } from './respond.js';
import {
  type Acknowledger,
  acknowledgePacket,
  buttonDeferral,
  defer,
  deferralFor,
  isMessageUpdate,
  isPrivateReply,
  MODAL_DEFERRAL,
  USER_COMMAND_DEFERRAL,
} from './router/acknowledge.js';
import { suggest } from './router/autocomplete.js';
import { InFlight } from './router/drain.js';
import { expired, guildOnly, refuseWhileClosing, unknownCommand } from './router/guard.js';
import { type Lookup, lookupIn } from './router/lookup.js';
import { run } from './router/run.js';
import { inInteractionSpan } from './traced.js';
import type { BotDeps, Registry } from './types.js';

export type { Acknowledger } from './router/acknowledge.js';
export { INTERACTION_DEADLINE_MS } from './router/run.js';

/** One interaction handled: what the router logs and hands to its hook. */
export interface HandledInteraction {
  kind: 'command' | 'button' | 'modal' | 'autocomplete';
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

/** What every stage of one router is given. */
interface Route {
  lookup: Lookup;
  rules: DeferralRules;
  deps: BotDeps;
  hooks: RouterHooks;
  acknowledger: Acknowledger | undefined;
  flight: InFlight;
}

export function createRouter(
  registry: Registry,
  deps: BotDeps,
  hooks: RouterHooks = {},
  acknowledger?: Acknowledger,
): Router {
  const route: Route = {
    lookup: lookupIn(registry),
    rules: registry.deferrals,
    deps,
    hooks,
    acknowledger,
    flight: new InFlight(),
  };
  return {
    // One trace an interaction (interactions/traced.ts).
    handle: (interaction) => inInteractionSpan(interaction, () => handleInSpan(route, interaction)),
    acknowledge(packet) {
      if (!acknowledger || route.flight.closed) return;
      acknowledgePacket(packet, acknowledger, route.rules, route.lookup, deps.logger);
    },
    get inFlight() {
      return route.flight.count;
    },
    close() {
      route.flight.close();
    },
    drain: (timeoutMs) => route.flight.drain(timeoutMs),
  };
}

async function handleInSpan(route: Route, interaction: Interaction): Promise<void> {
  const { deps, hooks, flight } = route;
  if (interaction.isAutocomplete()) {
    const command = route.lookup.command(interaction.commandName);
    const { outcome, durationMs } = await suggest(interaction, command, flight.closed, deps);
    annotate({ 'discord.interaction.outcome': outcome });
    const name = command ? interaction.commandName : 'unknown';
    hooks.onHandled?.({ kind: 'autocomplete', name, outcome, durationMs });
    return;
  }
  if (
    !interaction.isChatInputCommand() &&
    !interaction.isUserContextMenuCommand() &&
    !interaction.isButton() &&
    !interaction.isModalSubmit()
  ) {
    return;
  }
  if (flight.closed) {
    await refuseWhileClosing(interaction, route.acknowledger, deps.logger);
    return;
  }
  const started = deps.now();
  const kind = interaction.isButton() ? 'button' : interaction.isModalSubmit() ? 'modal' : 'command';
  flight.begin();
  let name =
    interaction.isButton() || interaction.isModalSubmit()
      ? customIdPrefix(interaction.customId)
      : interaction.commandName;
  let outcome = 'failed';
  try {
    const result = interaction.isChatInputCommand()
      ? await runCommand(route, interaction)
      : interaction.isUserContextMenuCommand()
        ? await runUserCommand(route, interaction)
        : interaction.isModalSubmit()
          ? await runModal(route, interaction)
          : await runButton(route, interaction);
    name = result.name;
    outcome = result.outcome;
  } catch (err) {
    // Discord refused our answer (expired token, unknown interaction, network): nothing more to say to the user.
    deps.logger.warn({ err, kind, name, guildId: interaction.guildId }, 'could not answer the interaction');
    outcome = 'unanswered';
  } finally {
    flight.end();
  }
  const durationMs = deps.now() - started;
  deps.logger.info(
    { kind, name, guildId: interaction.guildId, userId: interaction.user.id, outcome, durationMs },
    'interaction handled',
  );
  annotate({ 'discord.interaction.outcome': outcome });
  hooks.onHandled?.({ kind, name: name ?? 'unknown', outcome, durationMs });
}

async function runCommand(
  route: Route,
  interaction: ChatInputCommandInteraction,
): Promise<{ name: string; outcome: string }> {
  const name = interaction.commandName;
  const command = route.lookup.command(name);
  if (!command) return unknownCommand(interaction);
  const deferral = deferralFor(command, route.rules);
  // Nothing before the deferral that can wait: under a burst, work done first delays it. A command
  // that opens a form is not deferred: its handler shows the modal as the first response.
  if (deferral) await defer(interaction, deferral, route.acknowledger);
  const reply = deferral
    ? responderFor(interaction, isPrivateReply(deferral))
    : undeferredResponder(interaction);
  const outcome = await run(
    interaction,
    reply,
    guildOnly(command),
    { kind: 'command', name, wording: command, answer: (message, reply) => reply.private(message) },
    route.deps,
  );
  return { name, outcome };
}

/** A command of the context menu on a member: always answered privately. */
async function runUserCommand(
  route: Route,
  interaction: UserContextMenuCommandInteraction,
): Promise<{ name: string; outcome: string }> {
  const name = interaction.commandName;
  const command = route.lookup.userCommand(name);
  if (!command) return unknownCommand(interaction);
  await defer(interaction, USER_COMMAND_DEFERRAL, route.acknowledger);
  const outcome = await run(
    interaction,
    responderFor(interaction, true),
    command.execute,
    { kind: 'command', name, wording: command, answer: (message, reply) => reply.private(message) },
    route.deps,
  );
  return { name, outcome };
}

async function runButton(
  route: Route,
  interaction: ButtonInteraction,
): Promise<{ name: string; outcome: string }> {
  const handler = route.lookup.button(interaction.customId);
  if (!handler) return expired(interaction, 'unknown-button');
  const deferral = buttonDeferral(handler, interaction.customId);
  const update = deferral !== undefined && isMessageUpdate(deferral);
  // A button that opens a form is not deferred: its handler shows the modal as the first response.
  if (deferral) await defer(interaction, deferral, route.acknowledger);
  const outcome = await run(
    interaction,
    deferral ? responderFor(interaction, true) : undeferredResponder(interaction),
    handler.execute,
    {
      kind: 'button',
      name: handler.name,
      wording: handler,
      // The message the button is on stays as it was; the error comes as a private follow-up.
      answer: (message, reply) => (update ? privateFollowUp(interaction, message) : reply.private(message)),
    },
    route.deps,
  );
  return { name: handler.name, outcome };
}

/** A form's submit: deferred privately, then its handler (what was filled in, checked and saved). */
async function runModal(
  route: Route,
  interaction: ModalSubmitInteraction,
): Promise<{ name: string; outcome: string }> {
  const handler = route.lookup.modal(interaction.customId);
  if (!handler) return expired(interaction, 'unknown-form');
  await defer(interaction, MODAL_DEFERRAL, route.acknowledger);
  const outcome = await run(
    interaction,
    responderFor(interaction, true),
    handler.execute,
    {
      kind: 'modal',
      name: handler.name,
      wording: handler,
      answer: (message, reply) => reply.private(message),
    },
    route.deps,
  );
  return { name: handler.name, outcome };
}

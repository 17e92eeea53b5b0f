/**
 * The deferral table the gateway's thread, a restart's early resume and the router decide from
 * (src/gateway/deferral-rules.ts), as commands/definitions.ts states it beside each definition: a
 * rule for every command of the registry, nothing for what is not a command of it.
 */
import { ApplicationCommandType, InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { commandDefinitions, DEFERRAL_RULES, userCommandDefinitions } from '../../commands/definitions.js';
import { registry } from '../../commands/index.js';
import { applicationCommandDeferral } from '../../src/gateway/deferral-rules.js';

const rules = registry.deferrals;
const packet = (name: unknown, type = ApplicationCommandType.ChatInput) => ({
  id: '1',
  token: 't',
  type: InteractionType.ApplicationCommand,
  data: { name, type },
});

describe('deferral rules', () => {
  it("is the table a restart's early resume defers by, with a rule for every command deployed and handled", () => {
    expect(rules).toBe(DEFERRAL_RULES);
    const names = (list: ReadonlyArray<{ name: string }>) => list.map((c) => c.name).sort();
    // A command that opens a form has no deferral, and is said to open one instead.
    const ruled = [...Object.keys(rules.commands), ...(rules.forms ?? [])].sort();
    expect(ruled).toEqual(names(commandDefinitions));
    expect(ruled).toEqual(names(registry.commands.map((c) => c.data)));
    expect(rules.forms).toEqual(['setup']);
    expect(Object.keys(rules.commands)).not.toContain('setup');
    expect(Object.keys(rules.userCommands).sort()).toEqual(names(userCommandDefinitions));
    expect(Object.keys(rules.userCommands).sort()).toEqual(
      names((registry.userCommands ?? []).map((c) => c.data)),
    );
  });

  it('crosses to a thread as plain data', () => {
    expect(structuredClone(rules)).toEqual(rules);
  });

  it('defers /settings privately (every outcome is for the admin alone) and the others in the channel', () => {
    const deferred = Object.fromEntries(
      registry.commands.map((c) => [c.data.name, applicationCommandDeferral(packet(c.data.name), rules)]),
    );
    const reply = (ephemeral: boolean) => ({
      type: InteractionResponseType.DeferredChannelMessageWithSource,
      ephemeral,
    });
    expect(deferred).toEqual({
      up: reply(false),
      bot: reply(false),
      server: reply(false),
      profile: reply(false),
      settings: reply(true),
      leaderboard: reply(false),
      // Its first answer is the form: the gateway's thread must not defer it.
      setup: undefined,
      help: reply(true),
    });
  });

  it("defers the context menu's user commands privately, by name and type", () => {
    expect(registry.userCommands?.map((c) => c.data.name)).toEqual(['Directory card']);
    expect(applicationCommandDeferral(packet('Directory card', ApplicationCommandType.User), rules)).toEqual({
      type: InteractionResponseType.DeferredChannelMessageWithSource,
      ephemeral: true,
    });
    expect(applicationCommandDeferral(packet('Directory card'), rules)).toBeUndefined();
    expect(
      applicationCommandDeferral(packet('Directory card', ApplicationCommandType.Message), rules),
    ).toBeUndefined();
  });

  it('leaves alone what is not a slash command of the registry', () => {
    expect(applicationCommandDeferral(packet('nope'), rules)).toBeUndefined();
    expect(applicationCommandDeferral(packet('toString'), rules)).toBeUndefined();
    expect(applicationCommandDeferral(packet(42), rules)).toBeUndefined();
    expect(applicationCommandDeferral(packet('up', ApplicationCommandType.User), rules)).toBeUndefined();
    expect(
      applicationCommandDeferral(
        { ...packet('up'), type: InteractionType.ApplicationCommandAutocomplete },
        rules,
      ),
    ).toBeUndefined();
    expect(
      applicationCommandDeferral(
        { id: '1', token: 't', type: InteractionType.MessageComponent, data: { custom_id: 'up' } },
        rules,
      ),
    ).toBeUndefined();
  });
});

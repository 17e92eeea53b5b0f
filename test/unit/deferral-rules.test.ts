/**
 * The deferral table the gateway's thread decides from (src/gateway/deferral-rules.ts): the same
 * answer as the router's for every command of the registry, nothing for what is not a command of it.
 */
import { ApplicationCommandType, InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { DEFERRAL_RULES } from '../../commands/deferrals.js';
import { registry } from '../../commands/index.js';
import { applicationCommandDeferral, rulesOf } from '../../src/gateway/deferral-rules.js';

const rules = rulesOf(registry.commands, registry.userCommands);
const packet = (name: unknown, type = ApplicationCommandType.ChatInput) => ({
  id: '1',
  token: 't',
  type: InteractionType.ApplicationCommand,
  data: { name, type },
});

describe('deferral rules', () => {
  it("is the table a restart's early resume defers by, before the commands load (commands/deferrals.ts)", () => {
    expect(DEFERRAL_RULES).toEqual(rules);
  });

  it('crosses to a thread as plain data', () => {
    expect(structuredClone(rules)).toEqual(rules);
  });

  it('defers every command of the registry, privately exactly where its handler answers privately', () => {
    for (const command of registry.commands) {
      expect(applicationCommandDeferral(packet(command.data.name), rules)).toEqual({
        type: InteractionResponseType.DeferredChannelMessageWithSource,
        ephemeral: command.ephemeral === true,
      });
    }
    expect(applicationCommandDeferral(packet('up'), rules)).toMatchObject({ ephemeral: false });
    expect(applicationCommandDeferral(packet('settings'), rules)).toMatchObject({ ephemeral: true });
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

/**
 * /settings: routes each subcommand (or the `rewards` group) to the handler its concept keeps
 * beside its JSON (features/<concept>/settings.ts and settings-command.ts; the assembled JSON is
 * commands/definitions.ts): reminders and reminders-off (features/reminders), language, timezone
 * and show (features/settings/general.ts), thanks (features/up), digest, digest-off,
 * live-leaderboard and live-leaderboard-off (features/digests), rewards add | remove | show |
 * top-role (features/rewards), webhook and webhook-off (features/webhooks). Every answer is
 * private, in the user's language. Discord lets only members with Manage Server (or a role an
 * admin granted it to) use it.
 */

import { postsSettings } from '../src/features/digests/settings.js';
import { remindersSettings } from '../src/features/reminders/settings.js';
import { rewardsSettings } from '../src/features/rewards/settings.js';
import { generalSettings } from '../src/features/settings/general.js';
import {
  type SettingsAnswer,
  type SettingsHandler,
  settingsContextOf,
} from '../src/features/settings/settings.js';
import { thanksSettings } from '../src/features/up/settings.js';
import { webhookSettings } from '../src/features/webhooks/settings.js';
import { UserInputError } from '../src/interactions/error-message.js';
import type { CommandContext, SlashCommand } from '../src/interactions/types.js';
import { settingsCommand } from './definitions.js';

/** Each subcommand's (or group's) handler, by its name. */
const handlers: ReadonlyMap<string, SettingsHandler> = new Map(
  [
    remindersSettings,
    generalSettings,
    thanksSettings,
    postsSettings,
    rewardsSettings,
    webhookSettings,
  ].flatMap((concept) => Object.entries(concept)),
);

function run({ interaction, deps, t }: CommandContext): Promise<SettingsAnswer> | SettingsAnswer {
  const context = settingsContextOf(interaction, t);
  const options = interaction.options;
  const handler = handlers.get(options.getSubcommandGroup(false) ?? options.getSubcommand(true));
  if (!handler) throw new UserInputError('generic');
  return handler(deps, context, options);
}

export const settings: SlashCommand = {
  data: settingsCommand,
  guildOnly: true,
  async execute(ctx) {
    const answer = await run(ctx);
    await ctx.reply.private(answer.message);
    return answer.outcome;
  },
};

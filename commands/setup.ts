/**
 * /setup and the "Set up" button of the message posted on joining a server (features/setup/
 * welcome.ts): both open the same form (features/setup/form.ts); its submit applies it
 * (features/setup/setup.ts). Discord lets only members with Manage Server use /setup; the button
 * is on a message anyone sees, so it checks the member's permissions itself. Every answer private.
 */

import type { ButtonInteraction, ChatInputCommandInteraction } from 'discord.js';
import { PermissionFlagsBits } from 'discord.js';
import { renderRefusal } from '../src/features/settings/render.js';
import { defaults, settingsContextOf } from '../src/features/settings/settings.js';
import { formOf, readSetupForm, SETUP_FORM_ID } from '../src/features/setup/form.js';
import { applySetup } from '../src/features/setup/setup.js';
import { SETUP_BUTTON_ID } from '../src/features/setup/welcome.js';
import type { Translate } from '../src/i18n/index.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { BotDeps, ButtonHandler, ModalHandler, SlashCommand } from '../src/interactions/types.js';
import { setupCommand } from './definitions.js';

/** Opens the form, filled in with the server's settings as they are. */
async function openForm(
  interaction: ChatInputCommandInteraction | ButtonInteraction,
  deps: BotDeps,
  t: Translate,
): Promise<string> {
  const guildId = interaction.guildId;
  if (!guildId) throw new GuildOnlyError();
  const settings = (await deps.settings.get(guildId)) ?? defaults(guildId, deps.now());
  await interaction.showModal(
    formOf(
      settings,
      interaction.guildLocale ?? null,
      {
        channelId: interaction.channelId,
        postable: interaction.channelId !== null && deps.discord.isPostable(guildId, interaction.channelId),
      },
      t,
    ),
  );
  return 'form-opened';
}

export const setup: SlashCommand = {
  data: setupCommand,
  guildOnly: true,
  execute: ({ interaction, deps, t }) => openForm(interaction, deps, t),
};

/** "Set up" under the message posted on joining: the same form, for those who may manage the server. */
export const setupButton: ButtonHandler = {
  name: 'setup',
  matches: (customId) => customId === SETUP_BUTTON_ID,
  mode: () => 'form',
  async execute({ interaction, deps, t, reply }) {
    if (!interaction.inGuild()) throw new GuildOnlyError();
    if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) {
      await reply.private(renderRefusal(t('setup.onlyManagers'), t));
      return 'refused:not-manager';
    }
    return openForm(interaction, deps, t);
  },
};

/** The form's submit: checked, applied, and what is set now shown. */
export const setupForm: ModalHandler = {
  name: 'setup',
  matches: (customId) => customId === SETUP_FORM_ID,
  async execute({ interaction, deps, t, reply }) {
    const context = settingsContextOf(interaction, t);
    // Discord lets only those who could open the form submit it, but a submit is not bound to that.
    if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) {
      await reply.private(renderRefusal(t('setup.onlyManagers'), t));
      return 'refused:not-manager';
    }
    const form = readSetupForm(interaction);
    if (!form) {
      await reply.private(
        renderRefusal(t('setup.invalid', { setup: await deps.commands.mention('setup') }), t),
      );
      return 'refused:invalid-form';
    }
    const answer = await applySetup(deps, context, form);
    await reply.private(answer.message);
    return answer.outcome;
  },
};

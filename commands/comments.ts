/**
 * The "Comments" button of a card and the pager's previous / next. Everything the pager needs is
 * in the custom_id, so a button from before a restart still works: the comments are fetched again.
 */
import { MessageFlags } from 'discord.js';
import type { DirectoryClient } from '../src/directory/index.js';
import type { DiscordLookups } from '../src/discord/lookups.js';
import { privateFollowUp } from '../src/interactions/respond.js';
import type { ButtonHandler } from '../src/interactions/types.js';
import { flattenProfileComments, type PagedComment, renderCommentsPage } from '../src/render/comments.js';
import { type CommentsState, decodeComments, isCommentsId } from '../src/render/custom-id.js';
import { lookupOptions } from './cards.js';

async function load(
  directory: DirectoryClient,
  state: CommentsState,
  options: ReturnType<typeof lookupOptions>,
): Promise<PagedComment[]> {
  switch (state.kind) {
    case 'bot':
      return directory.getBotComments(state.id, options);
    case 'server':
      return directory.getServerComments(state.id, options);
    case 'profile':
      return flattenProfileComments(await directory.getProfileComments(state.id, options));
  }
}

/** A name for the title from Discord (the bot's or user's name, the guild's), never from the directory's budget. */
async function subjectName(discord: DiscordLookups, state: CommentsState): Promise<string> {
  if (state.kind === 'server') return discord.guildName(state.id) ?? state.id;
  return (await discord.identity(state.id))?.name ?? state.id;
}

export const comments: ButtonHandler = {
  name: 'comments',
  matches: isCommentsId,
  mode: (customId) => (decodeComments(customId)?.mode === 'page' ? 'update' : 'reply'),
  async execute({ interaction, deps, t, reply, deadline }) {
    const state = decodeComments(interaction.customId);
    if (!state) {
      await reply.private({ embeds: [{ description: t('errors.expired') }], components: [] });
      return 'expired';
    }
    const [list, subject] = await Promise.all([
      load(deps.directory, state, lookupOptions(deps, deadline)),
      subjectName(deps.discord, state),
    ]);
    const page = renderCommentsPage(state.kind, state.id, subject, list, state.page, t);
    // A page from before the pages were layouts (an embed) cannot become one by an edit that
    // leaves its embed: the next page comes as a message of its own, for the presser only.
    if (state.mode === 'page' && !interaction.message.flags.has(MessageFlags.IsComponentsV2)) {
      await privateFollowUp(interaction, page);
      return `page:${state.page}:new`;
    }
    await reply.public(page);
    return `page:${state.page}`;
  },
};

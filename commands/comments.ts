/**
 * The "Comments" button of a card and the pager's previous / next. Everything the pager needs is
 * in the custom_id, so a button from before a restart still works: the comments are fetched again.
 */
import type { DirectoryClient } from '../src/directory/index.js';
import type { DiscordLookups } from '../src/discord/lookups.js';
import type { ButtonHandler } from '../src/interactions/types.js';
import { flattenProfileComments, type PagedComment, renderCommentsPage } from '../src/render/comments.js';
import { type CommentsState, decodeComments, isCommentsId } from '../src/render/custom-id.js';

async function load(
  directory: DirectoryClient,
  state: CommentsState,
  deadline: number,
): Promise<PagedComment[]> {
  const options = { priority: 'interactive' as const, deadline };
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
      load(deps.directory, state, deadline),
      subjectName(deps.discord, state),
    ]);
    await reply.public(renderCommentsPage(state.kind, state.id, subject, list, state.page, t));
    return `page:${state.page}`;
  },
};

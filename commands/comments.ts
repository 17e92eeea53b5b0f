/**
 * The "Comments" button of a card and the pager's previous / next. Everything the pager needs is
 * in the custom_id, so a button from before a restart still works: the comments are fetched again.
 */
import type { ButtonHandler } from '../src/bot/types.js';
import type { DirectoryClient } from '../src/directory/client.js';
import { flattenProfileComments, type PagedComment, renderCommentsPage } from '../src/render/comments.js';
import { type CommentsState, decodeComments, isCommentsId } from '../src/render/custom-id.js';

async function load(directory: DirectoryClient, state: CommentsState): Promise<PagedComment[]> {
  const options = { priority: 'interactive' as const };
  switch (state.kind) {
    case 'bot':
      return directory.getBotComments(state.id, options);
    case 'server':
      return directory.getServerComments(state.id, options);
    case 'profile':
      return flattenProfileComments(await directory.getProfileComments(state.id, options));
  }
}

export const comments: ButtonHandler = {
  name: 'comments',
  matches: isCommentsId,
  mode: (customId) => (decodeComments(customId)?.mode === 'page' ? 'update' : 'reply'),
  async execute({ interaction, deps, t, reply }) {
    const state = decodeComments(interaction.customId);
    if (!state) {
      await reply.private({ embeds: [{ description: t('errors.expired') }], components: [] });
      return 'expired';
    }
    const list = await load(deps.directory, state);
    await reply.public(renderCommentsPage(state.kind, state.id, state.id, list, state.page, t));
    return `page:${state.page}`;
  },
};

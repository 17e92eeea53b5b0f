/**
 * A review told by v3's notifications, announced in the server's webhook channel: v3 keeps one
 * review per member and resource and names no review id, so the announcement of a member's review
 * (store/notifications.ts, comment_posts) is what its edit edits and its removal marks. An edit or
 * a removal whose announcement is gone (deleted in Discord, or from before the bot saw the review)
 * is posted as a new message, which becomes the review's announcement.
 *
 * Posted with the claim's nonce (a copy posted again after a crash is dropped) and no mentions.
 */
import type { APIMessageTopLevelComponent, REST } from 'discord.js';
import { DiscordCode, editMessage, type PostResult, postMessage } from '../../discord/messages.js';
import type { CommentPostRepository } from '../../store/notifications.js';

export interface ReviewPosts {
  rest: REST;
  comments: Pick<CommentPostRepository, 'get' | 'put'>;
  now: () => number;
}

/** Announces (or edits the announcement of) a member's review in `channelId`. */
export async function announceReview(
  deps: ReviewPosts,
  review: { guildId: string; userId: string; change: 'new' | 'edit' | 'delete' },
  channelId: string,
  layout: APIMessageTopLevelComponent[],
  nonce: string | null,
): Promise<PostResult> {
  const message = { layout, allowedMentions: { parse: [] } };
  if (review.change !== 'new') {
    const post = await deps.comments.get(review.guildId, review.userId);
    if (post && post.channelId === channelId) {
      const edited = await editMessage(deps.rest, post.channelId, post.messageId, message);
      if (edited.ok || !isGone(edited)) return edited;
    }
  }
  const posted = await postMessage(deps.rest, channelId, { ...message, ...(nonce ? { nonce } : {}) });
  if (posted.ok) {
    await deps.comments.put(review.guildId, review.userId, {
      channelId,
      messageId: posted.messageId,
      postedAt: deps.now(),
    });
  }
  return posted;
}

function isGone(result: PostResult): boolean {
  return (
    !result.ok && result.failure.kind === 'rejected' && result.failure.code === DiscordCode.UnknownMessage
  );
}

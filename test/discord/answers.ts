/** How an interaction's answer shows in the requests the stand-in recorded. */
import type { RecordedRestRequest } from './types.js';

/** Editing the original response (paths as recorded, below /api/v10). */
export const ORIGINAL_PATH = /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/;
/** Posting a follow-up message. */
export const FOLLOW_UP_PATH = /^\/webhooks\/\d+\/[^/]+$/;

/** An accepted edit of @original (a public outcome) or follow-up (a private one): the final answer. */
export function isFinalAnswer(request: RecordedRestRequest): boolean {
  if (request.status >= 300) return false;
  if (request.method === 'PATCH') return ORIGINAL_PATH.test(request.path);
  return request.method === 'POST' && FOLLOW_UP_PATH.test(request.path);
}

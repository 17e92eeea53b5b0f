/**
 * State of the comments pager lives in the button's custom_id, not in memory, so buttons keep
 * working after a restart: `comments:<mode>:<kind>:<id>:<page>`. mode o = open (new private
 * message), p = page (edit that message).
 */
export type CommentsKind = 'bot' | 'server' | 'profile';
export interface CommentsState {
  mode: 'open' | 'page';
  kind: CommentsKind;
  id: string;
  page: number;
}

const KIND_CODE: Record<CommentsKind, string> = { bot: 'b', server: 's', profile: 'p' };
const CODE_KIND: Record<string, CommentsKind> = { b: 'bot', s: 'server', p: 'profile' };
const PREFIX = 'comments';

export function encodeComments(state: CommentsState): string {
  return [
    PREFIX,
    state.mode === 'open' ? 'o' : 'p',
    KIND_CODE[state.kind],
    state.id,
    String(state.page),
  ].join(':');
}

/** Returns null for anything that is not a well-formed comments custom_id. */
export function decodeComments(customId: string): CommentsState | null {
  const match = /^comments:([op]):([bsp]):(\d{17,20}):(\d{1,4})$/.exec(customId);
  if (!match) return null;
  const [, mode, kind, id, page] = match as unknown as [string, string, string, string, string];
  const k = CODE_KIND[kind];
  if (!k) return null;
  return { mode: mode === 'o' ? 'open' : 'page', kind: k, id, page: Number(page) };
}

export function isCommentsId(customId: string): boolean {
  return customId.startsWith(`${PREFIX}:`);
}

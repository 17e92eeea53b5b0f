// The search service behind https://api.boticord.top/v3/search/ (docs/directory-v3-sources.md §3):
// a Meilisearch subset. POST /indexes/{bots|servers|comments}/search with `Authorization: Bearer
// <search key>`; answers and errors are raw Meilisearch JSON, not the {ok,result} envelope.

import type { Reply } from '../body.js';
import type { EmulatorState, SearchDocument, V3IndexName } from '../state.js';
import { allComments, indexedBot, indexedServer } from './resources.js';

export const SEARCH_INDEXES: readonly V3IndexName[] = ['bots', 'servers', 'comments'];

const FILTERABLE: Readonly<Record<V3IndexName, readonly string[]>> = {
  bots: ['id', 'tags'],
  servers: ['id', 'tags'],
  comments: ['id', 'author', 'resource', 'rating'],
};

const SORTABLE: Readonly<Record<V3IndexName, readonly string[]>> = {
  bots: ['created', 'ups', 'rating'],
  servers: ['created', 'ups', 'rating'],
  comments: ['created', 'rating'],
};

const SEARCHED: Readonly<Record<V3IndexName, readonly string[]>> = {
  bots: ['name', 'shortDescription', 'description'],
  servers: ['name', 'shortDescription', 'description'],
  comments: ['content'],
};

type MeiliType = 'invalid_request' | 'auth' | 'internal';

export function meiliError(status: number, code: string, type: MeiliType, message: string): Reply {
  return { status, body: { message, code, type, link: `https://docs.meilisearch.com/errors#${code}` } };
}

export const missingAuthorization = (): Reply =>
  meiliError(
    401,
    'missing_authorization_header',
    'auth',
    'The Authorization header is missing. It must use the bearer authorization method.',
  );

/** Meilisearch answers an unknown key with 403 (Code::InvalidApiKey is FORBIDDEN), not 401. */
export const invalidApiKey = (): Reply =>
  meiliError(
    403,
    'invalid_api_key',
    'auth',
    'The provided API key is invalid. The requested resources are protected with an API key.',
  );

export function documentsOf(state: EmulatorState, index: V3IndexName): SearchDocument[] {
  const seeded: SearchDocument[] =
    index === 'bots'
      ? [...state.bots.values()].map((b) => indexedBot(state, b))
      : index === 'servers'
        ? [...state.servers.values()].map((s) => indexedServer(state, s))
        : allComments(state).map((c) => ({ ...c }));
  const added = state.v3.documents[index];
  const addedIds = new Set(added.map((d) => d.id));
  // A document added with the id of a seeded one replaces it, as a Meilisearch upsert would.
  return [...seeded.filter((d) => !addedIds.has(d.id)), ...added];
}

type Condition = { attr: string; op: '=' | '!='; value: string };
type Parsed<T> = { ok: true; value: T } | { ok: false; reply: Reply };

const CONDITION_RE = /^\s*([A-Za-z_][\w.]*)\s*(!=|=)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\s*$/;

function invalid(param: string, message: string): Reply {
  return meiliError(400, `invalid_search_${param}`, 'invalid_request', message);
}

function parseCondition(index: V3IndexName, text: string): Parsed<Condition> {
  const m = CONDITION_RE.exec(text);
  if (m === null || m[1] === undefined || m[2] === undefined) {
    return {
      ok: false,
      reply: invalid('filter', `Was expecting an operation \`=\` or \`!=\` in \`${text}\`.`),
    };
  }
  const attr = m[1];
  if (!FILTERABLE[index].includes(attr)) {
    const list = FILTERABLE[index].join(', ');
    return {
      ok: false,
      reply: invalid(
        'filter',
        `Attribute \`${attr}\` is not filterable. Available filterable attributes are: \`${list}\`.`,
      ),
    };
  }
  return { ok: true, value: { attr, op: m[2] === '=' ? '=' : '!=', value: m[3] ?? m[4] ?? m[5] ?? '' } };
}

/** Conjunction of disjunctions: a string is split on AND (and each part on OR); an array is AND of
 * its items, an inner array OR of its strings. */
function parseFilter(index: V3IndexName, filter: unknown): Parsed<Condition[][]> {
  if (filter === undefined || filter === null) return { ok: true, value: [] };
  const out: Condition[][] = [];
  const addOr = (parts: readonly unknown[]): Reply | null => {
    const group: Condition[] = [];
    for (const p of parts) {
      if (typeof p !== 'string')
        return invalid('filter', 'Invalid value type: expected a string or an array.');
      const c = parseCondition(index, p);
      if (!c.ok) return c.reply;
      group.push(c.value);
    }
    out.push(group);
    return null;
  };
  const items = typeof filter === 'string' ? filter.split(/\s+AND\s+/i) : filter;
  if (!Array.isArray(items))
    return { ok: false, reply: invalid('filter', 'Invalid value type for `filter`.') };
  for (const item of items) {
    const err =
      typeof item === 'string' ? addOr(item.split(/\s+OR\s+/i)) : Array.isArray(item) ? addOr(item) : null;
    if (err !== null) return { ok: false, reply: err };
    if (typeof item !== 'string' && !Array.isArray(item)) {
      return { ok: false, reply: invalid('filter', 'Invalid value type for `filter`.') };
    }
  }
  return { ok: true, value: out };
}

function matchesCondition(doc: SearchDocument, c: Condition): boolean {
  const v = doc[c.attr];
  const equal = Array.isArray(v)
    ? v.some((x) => String(x) === c.value)
    : v !== undefined && v !== null && String(v) === c.value;
  return c.op === '=' ? equal : !equal;
}

function parseSort(index: V3IndexName, sort: unknown): Parsed<{ attr: string; desc: boolean }[]> {
  if (sort === undefined || sort === null) return { ok: true, value: [] };
  if (!Array.isArray(sort))
    return { ok: false, reply: invalid('sort', 'Invalid value type for `sort`: expected an array.') };
  const out: { attr: string; desc: boolean }[] = [];
  for (const s of sort) {
    const m = typeof s === 'string' ? /^([\w.]+):(asc|desc)$/.exec(s) : null;
    if (m === null || m[1] === undefined) {
      return {
        ok: false,
        reply: invalid('sort', `Invalid syntax for the sort parameter: \`${String(s)}\`.`),
      };
    }
    if (!SORTABLE[index].includes(m[1])) {
      const list = SORTABLE[index].join(', ');
      return {
        ok: false,
        reply: invalid(
          'sort',
          `Attribute \`${m[1]}\` is not sortable. Available sortable attributes are: \`${list}\`.`,
        ),
      };
    }
    out.push({ attr: m[1], desc: m[2] === 'desc' });
  }
  return { ok: true, value: out };
}

function intParam(
  body: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
): Parsed<number> {
  const v = body[name];
  if (v === undefined || v === null) return { ok: true, value: fallback };
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    return {
      ok: false,
      reply: invalid(
        name === 'hitsPerPage' ? 'hits_per_page' : name,
        `Invalid value in parameter \`${name}\`: expected a positive integer.`,
      ),
    };
  }
  return { ok: true, value: v };
}

export function runSearch(state: EmulatorState, index: V3IndexName, body: Record<string, unknown>): Reply {
  const q = body.q;
  if (q !== undefined && q !== null && typeof q !== 'string') {
    return invalid('q', 'Invalid value type at `.q`: expected a string.');
  }
  const query = typeof q === 'string' ? q : '';
  const filter = parseFilter(index, body.filter);
  if (!filter.ok) return filter.reply;
  const sort = parseSort(index, body.sort);
  if (!sort.ok) return sort.reply;
  const needle = query.trim().toLowerCase();
  let hits = documentsOf(state, index).filter(
    (d) =>
      (needle === '' ||
        SEARCHED[index].some(
          (f) => typeof d[f] === 'string' && (d[f] as string).toLowerCase().includes(needle),
        )) &&
      filter.value.every((group) => group.some((c) => matchesCondition(d, c))),
  );
  if (sort.value.length > 0) {
    hits = [...hits].sort((a, b) => {
      for (const { attr, desc } of sort.value) {
        const x = Number(a[attr] ?? 0);
        const y = Number(b[attr] ?? 0);
        if (x !== y) return desc ? y - x : x - y;
      }
      return 0;
    });
  }
  const retrieve = body.attributesToRetrieve;
  const pick = (d: SearchDocument): Record<string, unknown> =>
    Array.isArray(retrieve) && !retrieve.includes('*')
      ? Object.fromEntries(Object.entries(d).filter(([k]) => retrieve.includes(k)))
      : d;
  const processingTimeMs = 1;
  if (body.page !== undefined || body.hitsPerPage !== undefined) {
    const page = intParam(body, 'page', 1, 0);
    if (!page.ok) return page.reply;
    const perPage = intParam(body, 'hitsPerPage', 20, 0);
    if (!perPage.ok) return perPage.reply;
    const start = Math.max(0, page.value - 1) * perPage.value;
    const slice = page.value === 0 ? [] : hits.slice(start, start + perPage.value);
    return {
      status: 200,
      body: {
        hits: slice.map(pick),
        query,
        processingTimeMs,
        hitsPerPage: perPage.value,
        page: page.value,
        totalPages: perPage.value === 0 ? 0 : Math.ceil(hits.length / perPage.value),
        totalHits: hits.length,
      },
    };
  }
  const limit = intParam(body, 'limit', 20, 0);
  if (!limit.ok) return limit.reply;
  const offset = intParam(body, 'offset', 0, 0);
  if (!offset.ok) return offset.reply;
  return {
    status: 200,
    body: {
      hits: hits.slice(offset.value, offset.value + limit.value).map(pick),
      query,
      processingTimeMs,
      limit: limit.value,
      offset: offset.value,
      estimatedTotalHits: hits.length,
    },
  };
}

/**
 * N rows (issue 37): hostile notifications over the directory's v3 WebSocket, sent by the emulator
 * (`emu.v3.sendRaw`, `emu.v3.notify`) to the running bot on DIRECTORY_API_VERSION=v3 with the staff
 * key, whose account owns the stand-in guild (the sample server, IDS.serverFresh).
 *
 * Every row ends with a sentinel: a valid up on the site, sent after the hostile frames on the same
 * socket. The client hands events over in order, so once the sentinel's up is in the server's
 * history every frame before it has been dealt with; what the store holds then is all it will hold.
 * Each row checks that the store holds the events it should and nothing else (webhook_events,
 * up_history, the reminder, comment_posts), that nothing was posted but what a valid event
 * announces, and that the socket stayed (or, after a frame over the size limit, came back). The
 * suite's checks of every row (fixtures.ts) add: no token in a log line or a body sent to Discord,
 * no message that can ping (allowed_mentions parses nothing, no raw @everyone/<@&…>), no unhandled
 * error.
 *
 * Memory: the rows that push the most through (the 1 MB frames, the 3,000 frames) compare the
 * process's heap before and after, with the bound HEAP_BOUND_MB. The bot runs in the suite's own
 * process beside other rows, so the bound is loose: it catches frames kept (a 1 MB frame each, or
 * 3,000 frames held), not a few kilobytes.
 */
import { type Engine, HistoryRepository, type Store, WebhookRepository } from '../../../src/store/index.js';
import { makeGuild, makeTextChannel, type PostedMessage } from '../../discord/index.js';
import type { Harness } from '../../e2e/harness.js';
import { mentionProblems, sentMessages, stringsIn, visibleText } from '../../e2e/harness.js';
import { IDS, V3_KEYS } from '../../emulator/index.js';
import { freshPlace } from '../../store/places.js';
import { eventually } from '../../support/wait.js';
import { EN, inHarness } from '../fixtures.js';
import { type Checks, track } from '../helpers.js';
import type { Family, Row } from '../runner.js';

const GUILD = IDS.serverFresh;
/** The key whose account (IDS.serviceBotOwner) owns the sample server: its events reach this socket. */
const KEY = V3_KEYS.staff;
const HOOK_KEY = 'hk_notify-faults-4e8a1c';
/** How much the heap may grow over a row that pushes megabytes through (see the file's comment). */
const HEAP_BOUND_MB = 64;
const MB = 1024 * 1024;

/** Members of the rows' events: snowflakes of their own, never a seeded account. */
const member = (n: number): string => `31000000000000${String(n).padStart(4, '0')}`;
const SENTINEL = member(9999);

const V3_ENV = {
  DIRECTORY_API_VERSION: 'v3',
  DIRECTORY_TOKEN: KEY,
  DIRECTORY_TOKEN_KIND: undefined,
  DIRECTORY_ROUTE_RATE_LIMIT: undefined,
  // The staff key's account develops the service bot: the bot is it (its stats post is its own).
  DISCORD_APPLICATION_ID: IDS.serviceBot,
  STATS_FIRST_DELAY: '1h',
};

/** A notify frame's text, as the directory sends one. */
function notifyFrame(data: Record<string, unknown>): string {
  return JSON.stringify({ event: 'notify', data });
}

/** A valid up_added's data, for the sample server. */
function upData(
  user: string,
  happened: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { type: 'up_added', affected: GUILD, user, happened, payload: { upCount: 1 }, ...extra };
}

interface Seen {
  events: { id: string; type: string; state: string }[];
  history: { user_id: string; at: number; source: string }[];
  reminder: { next_up_at: number } | undefined;
  commentPosts: number;
}

async function seen(store: Store): Promise<Seen> {
  return store.run(async (db) => {
    const events = await db
      .selectFrom('webhook_events')
      .select(['id', 'type', 'state'])
      .where('guild_id', '=', GUILD)
      .orderBy('received_at')
      .execute();
    const history = await db
      .selectFrom('up_history')
      .select(['user_id', 'at', 'source'])
      .where('guild_id', '=', GUILD)
      .orderBy('at')
      .execute();
    const reminder = await db
      .selectFrom('reminders')
      .select(['next_up_at'])
      .where('guild_id', '=', GUILD)
      .executeTakeFirst();
    const posts = await db.selectFrom('comment_posts').select('user_id').execute();
    return {
      events: events.map((e) => ({ id: e.id, type: e.type, state: String(e.state) })),
      history: history.map((r) => ({ user_id: r.user_id, at: Number(r.at), source: r.source })),
      reminder: reminder && { next_up_at: Number(reminder.next_up_at) },
      commentPosts: posts.length,
    };
  });
}

/** The socket the bot holds on the emulator (authenticated with the staff key), once it is there. */
async function readySocket(h: Harness, what: string, other?: string): Promise<string> {
  return eventually(
    () => {
      if (h.bot.notifications?.state !== 'ready') return undefined;
      const socket = h.emu.v3.sockets().find((s) => s.authed && s.key === KEY && s.id !== other);
      return socket?.id;
    },
    20_000,
    what,
  );
}

/** Sends the sentinel up and waits until it is in the history and its event is done. */
async function sentinel(h: Harness, at: number): Promise<Seen> {
  h.emu.v3.upOnSite(GUILD, SENTINEL, { at });
  return eventually(
    async () => {
      const now = await seen(h.bot.store);
      const done = now.events.some((e) => e.id.includes(`:${SENTINEL}:${at}`) && e.state === 'done');
      return done && now.history.some((r) => r.user_id === SENTINEL) ? now : undefined;
    },
    20_000,
    'the sentinel up in the history and its event done',
  );
}

/** The ids of what the sentinel stores: its event, and its history row. */
function sentinelOnly(c: Checks, s: Seen, at: number): void {
  c.equal(
    s.events.map((e) => e.id),
    [`${GUILD}:v3:up_added:${GUILD}:${SENTINEL}:${at}`],
    'stored events',
  );
  c.equal(s.history, [{ user_id: SENTINEL, at, source: 'notify' }], 'history rows');
  c.equal(s.commentPosts, 0, 'comment announcements remembered');
}

function heapMb(): number {
  return process.memoryUsage().heapUsed / MB;
}

function rssMb(): number {
  return process.memoryUsage().rss / MB;
}

/** Heap and rss growth over a row; a problem when the heap grew past HEAP_BOUND_MB. */
function memoryNote(c: Checks, before: { heap: number; rss: number }): string {
  const heap = heapMb() - before.heap;
  const rss = rssMb() - before.rss;
  c.that(heap <= HEAP_BOUND_MB, `the heap grew ${heap.toFixed(1)} MB (bound ${HEAP_BOUND_MB} MB)`);
  return `heap ${heap >= 0 ? '+' : ''}${heap.toFixed(1)} MB, rss ${rss >= 0 ? '+' : ''}${rss.toFixed(1)} MB`;
}

/** Requests that changed something in Discord outside an interaction's answer (posts, edits, deletes). */
function channelWrites(h: Harness): string[] {
  return h.discord.requests
    .filter((r) => r.method !== 'GET' && /^\/channels\//.test(r.path))
    .map((r) => `${r.method} ${r.path}`);
}

interface NotifyRowSpec {
  id: string;
  fault: string;
  expected: string;
  timeoutMs?: number;
  engine?: Engine;
  /** Whether the row's valid events post (a review is announced). */
  channelPosts?: boolean;
  /** The row cuts the socket on purpose (the bot connects again). */
  reconnects?: boolean;
  body: (h: Harness, c: Checks, ctx: { events: string; socket: string }) => Promise<string>;
}

/**
 * A row: the bot on v3 with the staff key, its notifications connected, the server's webhook
 * channel set (/settings webhook: where reviews are announced), then `body`.
 */
function notifyRow(spec: NotifyRowSpec): Row {
  return {
    id: spec.id,
    fault: spec.fault,
    expected: spec.expected,
    timeoutMs: spec.timeoutMs ?? 40_000,
    postgres: spec.engine === 'postgres',
    run: async () => {
      const place = spec.engine === 'postgres' ? await freshPlace('postgres') : undefined;
      const remove = track(async () => {
        await place?.remove();
      });
      const events = makeTextChannel({ name: 'directory-events' });
      const guild = makeGuild({ id: GUILD, name: 'BotiCord Community', channels: ['general', events] });
      try {
        return await inHarness(
          { guilds: [guild], postStats: true, env: { ...V3_ENV, ...place?.env } },
          async (h, c) => {
            h.secrets.add(KEY);
            const socket = await readySocket(h, 'the notifications connection');
            // The server's webhook channel, as /settings webhook leaves it (without its welcome post).
            await new WebhookRepository(h.bot.store).configure(GUILD, HOOK_KEY, events.id, Date.now());
            const attempts = h.emu.v3.connectionAttempts;
            const observed = await spec.body(h, c, { events: events.id, socket });
            if (!spec.reconnects) {
              c.equal(h.emu.v3.connectionAttempts - attempts, 0, 'connections opened again');
              c.that(
                h.emu.v3.sockets().some((s) => s.id === socket),
                'the first socket is gone',
              );
            }
            if (!spec.channelPosts) c.none(channelWrites(h), 'the bot wrote into a channel');
            return observed;
          },
          { channelPosts: spec.channelPosts ?? false },
        );
      } finally {
        await remove();
      }
    },
  };
}

// ---- the rows ---------------------------------------------------------------------------------

const BROKEN_FRAMES: (string | Buffer)[] = [
  '{',
  'not json at all',
  '{"event":"notify","data":',
  `${notifyFrame(upData(member(1), Date.now()))}}`,
  'null',
  '[]',
  '"notify"',
  '42',
  '{"event":null}',
  '{"event":"notify","data":null}',
  '{"event":"notify","data":[1,2]}',
  '{"event":"notify","data":"up_added"}',
  '{"__proto__":{"event":"notify"},"data":{}}',
  '\u0000\u001b[2J',
  '',
  Buffer.from([0xff, 0xfe, 0x00, 0x7b]),
];

const n1 = notifyRow({
  id: 'N1',
  fault: 'notify: broken JSON, non-objects, a cut frame, binary frames',
  expected: 'socket kept; nothing stored or posted; the next valid up stored once',
  body: async (h, c) => {
    for (const frame of BROKEN_FRAMES) h.emu.v3.sendRaw(frame, KEY);
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    const dropped = h.entries().filter((e) => e.msg === 'notifications: frames dropped (invalid or unknown)');
    c.that(dropped.length <= 1, `${dropped.length} "frames dropped" lines, not at most 1 (throttled)`);
    return `${BROKEN_FRAMES.length} frames; stored ${s.events.length} (the sentinel), history ${s.history.length}; dropped lines ${dropped.length}`;
  },
});

const n2 = notifyRow({
  id: 'N2',
  fault: 'notify: an unknown event, and notify of unknown types (boost_added, a bot page up)',
  expected: 'socket kept; none stored, none announced, no history',
  body: async (h, c) => {
    const now = Date.now() - 2_000;
    h.emu.v3.sendRaw(JSON.stringify({ event: 'surprise', data: upData(member(3), now) }), KEY);
    h.emu.v3.sendRaw(JSON.stringify({ event: 'NOTIFY', data: upData(member(3), now) }), KEY);
    h.emu.v3.notify({
      type: 'boost_added',
      affected: GUILD,
      user: member(4),
      payload: { upCount: 3 },
      happened: now,
    });
    h.emu.v3.notify({
      type: 'comment_pinned',
      affected: GUILD,
      user: member(5),
      payload: { content: 'hi', rating: 5 },
      happened: now,
    });
    // The bot's own page (the service bot, developed by the staff account): no server to go to.
    h.emu.v3.notify({
      type: 'up_added',
      affected: IDS.serviceBot,
      user: member(6),
      payload: { upCount: 1 },
      happened: now,
    });
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    const bots = await h.bot.store.run((db) =>
      db.selectFrom('webhook_events').select('id').where('guild_id', '=', IDS.serviceBot).execute(),
    );
    c.equal(bots.length, 0, "events stored for the bot's own page");
    return `2 unknown events, 2 unknown types, 1 of the bot's page: stored ${s.events.length} (the sentinel)`;
  },
});

/** A valid notify padded to about 1 MB with a field nobody reads, and a review of 1 MB of text. */
function hugeFrames(at: number): string[] {
  const pad = 'x'.repeat(MB);
  return [
    notifyFrame({ ...upData(member(7), at), padding: pad }),
    notifyFrame({
      type: 'comment_added',
      affected: GUILD,
      user: member(8),
      happened: at,
      payload: { content: pad, rating: 5 },
    }),
  ];
}

const n3 = notifyRow({
  id: 'N3',
  fault: 'notify: a 1 MB frame (limit 64 KiB), twice',
  expected: `the socket cut and opened again each time; neither stored; heap +≤${HEAP_BOUND_MB} MB`,
  timeoutMs: 50_000,
  reconnects: true,
  body: async (h, c, { socket }) => {
    const before = { heap: heapMb(), rss: rssMb() };
    const frames = hugeFrames(Date.now() - 5_000);
    let last = socket;
    for (const frame of frames) {
      const sent = h.emu.v3.sendRaw(frame, KEY);
      c.equal(sent, 1, 'sockets the frame went to');
      last = await readySocket(h, 'a new connection after the frame over the limit', last);
    }
    c.that(last !== socket, 'the connection did not come back on a new socket');
    c.equal(h.emu.v3.sockets().filter((s) => s.key === KEY).length, 1, 'sockets of the key');
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    const memory = memoryNote(c, before);
    return `2 frames of 1 MB: each cut the socket, back as ${last}; stored ${s.events.length} (the sentinel); ${memory}`;
  },
});

const FLOOD_UPS = 100;
const FLOOD_COPIES = 20;
const FLOOD_INVALID = 1_000;

const n4 = notifyRow({
  id: 'N4',
  fault: `notify: 3,000 frames at once (${FLOOD_UPS} ups ×${FLOOD_COPIES} copies, ${FLOOD_INVALID} invalid)`,
  expected: `socket kept; each up stored and credited once; heap +≤${HEAP_BOUND_MB} MB`,
  timeoutMs: 60_000,
  body: async (h, c) => {
    const before = { heap: heapMb(), rss: rssMb() };
    const base = Date.now() - 3_600_000;
    const frames: string[] = [];
    for (let copy = 0; copy < FLOOD_COPIES; copy++) {
      for (let i = 0; i < FLOOD_UPS; i++) frames.push(notifyFrame(upData(member(100 + i), base + i * 1_000)));
    }
    for (let i = 0; i < FLOOD_INVALID; i++) {
      frames.splice(i * 3, 0, notifyFrame(upData(`not-a-snowflake-${i}`, base + i)));
    }
    const started = performance.now();
    for (const frame of frames) h.emu.v3.sendRaw(frame, KEY);
    const sendMs = performance.now() - started;
    c.that(sendMs < 1_000, `3,000 frames took ${Math.round(sendMs)} ms to send, not under a second`);
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    const ups = s.history.filter((r) => r.user_id !== SENTINEL);
    c.equal(ups.length, FLOOD_UPS, 'history rows of the flood');
    c.equal(new Set(ups.map((r) => r.user_id)).size, FLOOD_UPS, 'members credited');
    c.that(
      ups.every((r) => r.source === 'notify'),
      'a flood up not credited as notify',
    );
    c.equal(s.events.length, FLOOD_UPS + 1, 'stored events (the flood once each, the sentinel)');
    c.equal(
      s.events.filter((e) => e.state !== 'done').map((e) => e.state),
      [],
      'events not done',
    );
    const memory = memoryNote(c, before);
    return `${frames.length} frames in ${Math.round(sendMs)} ms: stored ${s.events.length}, history ${s.history.length}; ${memory}`;
  },
});

const NOT_SNOWFLAKES: unknown[] = [
  '../../x',
  '0',
  '-1',
  '1e18',
  '0x1234567890abcdef',
  '12345678901234567890123',
  ' 722424773233213460',
  '722424773233213460\n',
  '७२२४२४७७३२३३२१३४६०',
  Number('722424773233213460'),
  null,
  '',
];

const n5 = notifyRow({
  id: 'N5',
  fault: 'notify: affected and user ids that are not snowflakes (paths, numbers, digits of another script)',
  expected: 'socket kept; none stored; no history; no request about them',
  body: async (h, c) => {
    const now = Date.now() - 2_000;
    let sent = 0;
    for (const bad of NOT_SNOWFLAKES) {
      h.emu.v3.sendRaw(notifyFrame(upData(member(9), now, { affected: bad })), KEY);
      h.emu.v3.sendRaw(notifyFrame(upData(member(9), now, { user: bad })), KEY);
      sent += 2;
    }
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    const odd = h.emu.requests.filter((r) => r.path.includes('..') || /x1234|1e18/.test(r.path));
    c.none(
      odd.map((r) => `${r.method} ${r.path}`),
      'a request built from a bad id',
    );
    return `${sent} frames with bad ids: stored ${s.events.length} (the sentinel)`;
  },
});

const n6 = notifyRow({
  id: 'N6',
  fault: '`happened` in the far future, before 2015, not an integer, not a number',
  expected: 'socket kept; none stored; no history; the reminder not moved',
  body: async (h, c) => {
    const now = Date.now();
    const bad: unknown[] = [
      now + 365 * 86_400_000,
      now + 11 * 60_000,
      8.64e15,
      Number.MAX_SAFE_INTEGER,
      1e308,
      1_420_070_399_999,
      0,
      -1,
      now - 1_000.5,
      String(now),
      null,
    ];
    for (const [i, happened] of bad.entries()) {
      h.emu.v3.sendRaw(notifyFrame(upData(member(10 + i), now, { happened })), KEY);
    }
    // A number too large for JSON's doubles, as text.
    h.emu.v3.sendRaw(
      `{"event":"notify","data":{"type":"up_added","affected":"${GUILD}","user":"${member(30)}","happened":1e400,"payload":{"upCount":1}}}`,
      KEY,
    );
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    // The sentinel (the only up) moved the reminder to a day after it: nothing later came from the future.
    const next = s.reminder?.next_up_at;
    c.that(
      next === undefined || next <= at + 24 * 3_600_000,
      `the reminder is due ${String(next)}, after the sentinel's day`,
    );
    return `${bad.length + 1} frames with bad times: stored ${s.events.length} (the sentinel); reminder ${next === undefined ? 'none' : `at sentinel + ${Math.round((next - at) / 3_600_000)} h`}`;
  },
});

/** Every ping, markdown and a terminal's escapes, in one review. */
const HOSTILE_REVIEW =
  `@everyone @here <@${IDS.profileUser}> <@!${IDS.profileUser}> <@&${GUILD}> ` +
  '**bold** __under__ ||spoiler|| `code` # heading\n> quote [link](https://evil.example) ' +
  '\u001b[31mred\u001b[0m \u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007 \u009b2J end';

/** ESC, CSI and BEL: what makes a terminal act on text. */
const ESCAPE_CHARS = ['\u001b', '\u009b', '\u0007'];
const hasEscape = (text: string): boolean => ESCAPE_CHARS.some((ch) => text.includes(ch));

function announcementProblems(m: PostedMessage): string[] {
  const problems = mentionProblems(m.body).map((p) => `${m.id}: ${p}`);
  if (m.pings.everyone || m.pings.users.length > 0 || m.pings.roles.length > 0)
    problems.push(`${m.id} pings ${JSON.stringify(m.pings)}`);
  if (stringsIn(m.body).some((t) => hasEscape(t))) problems.push(`${m.id} carries a terminal escape`);
  if (/@everyone|@here/.test(m.text)) problems.push(`${m.id} shows a raw @everyone/@here`);
  return problems;
}

const n7 = notifyRow({
  id: 'N7',
  fault:
    'notify: a review with @everyone, <@id>, <@&role>, markdown and terminal escapes; added, edited, removed',
  expected: 'one announcement, edited twice; allowed_mentions parses nothing; text escaped, no ESC left',
  channelPosts: true,
  body: async (h, c, { events }) => {
    const user = member(40);
    const t = Date.now() - 10_000;
    h.emu.v3.comment('comment_added', GUILD, user, { content: HOSTILE_REVIEW, rating: 1 }, { at: t });
    h.emu.v3.comment(
      'comment_edited',
      GUILD,
      user,
      { content: `${HOSTILE_REVIEW} (edited)`, rating: 2 },
      { at: t + 1 },
    );
    h.emu.v3.comment('comment_removed', GUILD, user, { content: HOSTILE_REVIEW, rating: 2 }, { at: t + 2 });
    // An up whose payload is text, not a count: stored with no count, pinging no one either.
    h.emu.v3.notify({
      type: 'up_added',
      affected: GUILD,
      user: member(41),
      payload: { upCount: '@everyone' },
      happened: t + 3,
    });
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    c.equal(s.events.length, 5, 'stored events (three review changes, the up, the sentinel)');
    const posted = h.discord.channelMessages(events);
    const writes = channelWrites(h);
    c.equal(posted.length, 1, 'announcements posted');
    c.equal(
      writes.map((w) => w.split(' ')[0]),
      ['POST', 'PATCH', 'PATCH'],
      'writes into the channel',
    );
    c.none(posted.flatMap(announcementProblems), 'an announcement could ping or carries escapes');
    // Every body the bot sent (posts and edits): nothing can ping, no escape reaches Discord.
    const bodies = sentMessages(h.discord.requests);
    c.none(
      bodies.flatMap((b) => mentionProblems(b)),
      'a message could ping',
    );
    c.that(!bodies.some((b) => stringsIn(b).some((x) => hasEscape(x))), 'a terminal escape reached Discord');
    c.that(!h.lines.some((l) => hasEscape(l)), 'a raw terminal escape reached a log line');
    c.equal(s.commentPosts, 1, 'comment announcements remembered');
    c.equal(
      s.history.map((r) => r.user_id),
      [member(41), SENTINEL],
      'history rows',
    );
    // What the message shows now, its edits applied.
    const text = visibleText((posted[0]?.message ?? {}) as Record<string, unknown>);
    c.that(
      text.includes(EN('webhook.review.delete')),
      `the announcement does not say the review was removed: ${JSON.stringify(text.slice(0, 80))}`,
    );
    return `events ${s.events.length}; 1 announcement (${writes.join(', ')}), now ${JSON.stringify(text.slice(0, 60))}`;
  },
});

const n8 = notifyRow({
  id: 'N8',
  fault: 'notify: the hostile frames of N1, N5 and N6 on PostgreSQL',
  expected: 'socket kept; nothing stored but the next valid up',
  engine: 'postgres',
  body: async (h, c) => {
    const now = Date.now() - 2_000;
    for (const frame of BROKEN_FRAMES) h.emu.v3.sendRaw(frame, KEY);
    for (const bad of NOT_SNOWFLAKES)
      h.emu.v3.sendRaw(notifyFrame(upData(member(9), now, { user: bad })), KEY);
    h.emu.v3.sendRaw(notifyFrame(upData(member(9), now + 365 * 86_400_000)), KEY);
    h.emu.v3.notify({ type: 'boost_added', affected: GUILD, user: member(4), payload: null, happened: now });
    const at = Date.now() - 1_000;
    const s = await sentinel(h, at);
    sentinelOnly(c, s, at);
    const latest = await new HistoryRepository(h.bot.store).latest(GUILD);
    c.equal(latest, { userId: SENTINEL, at, source: 'notify' }, 'the latest up');
    return `stored ${s.events.length} (the sentinel) on PostgreSQL`;
  },
});

export const notificationFaults: Family = {
  title: "hostile notifications over the directory's v3 WebSocket",
  // Their own stage: the floods (N3, N4) would load the rows that time their answers.
  stage: 5,
  rows: [n1, n2, n3, n4, n5, n6, n7, n8],
};

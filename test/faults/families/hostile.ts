/**
 * H rows: a hostile or broken directory, through the real bot (the one place these scenarios
 * run: test/e2e has no copy). An ID that is a path steers no request to Discord, a body dripped a
 * byte at a time and a day-long Retry-After are told within seconds, times past what a Date holds
 * never show as `NaN`, and the directory's own text (records, the /up message, an error's message)
 * reaches nobody as a ping, a control sequence or an embed over Discord's limits.
 */
import type { APIEmbed } from 'discord.js';
import { drip, startHostileServer } from '../../contract/hostile-server.js';
import { isFinalAnswer, makeUser, type RecordedRestRequest } from '../../discord/index.js';
import {
  type Answer,
  buttonsOf,
  type Harness,
  isEphemeral,
  LEVEL,
  liveMessages,
  mentionProblems,
  optionString,
  sentMessages,
  visibleText,
} from '../../e2e/harness.js';
import { DEFAULT_COOLDOWN_MS, IDS } from '../../emulator/index.js';
import { isLayoutMessage, viewOf } from '../../support/layout-view.js';
import {
  CONTROLS,
  embedTotal,
  expectNoPing,
  expectWithinLimits,
  HOSTILE_NAME,
  RLO,
} from '../../unit/render/helpers.js';
import { bumpsOf, EN, firstEmbed, freshGuild, inHarness, newUserRef } from '../fixtures.js';
import { type Checks, message, track } from '../helpers.js';
import type { Family, Row } from '../runner.js';

/** The interaction's own routes: all the bot may ask Discord for a card whose ID is no snowflake. */
const INTERACTION_ROUTE =
  /^\/(interactions\/\d+\/[^/]+\/callback|webhooks\/\d+\/[^/]+(\/messages\/(@original|\d+))?)$/;
/** `NaN`, or a Discord timestamp whose seconds are not a number. */
const NOT_A_TIME = /NaN|<t:-?\d*[^\d:]/;
/** An OSC 8 hyperlink and a screen clear: what a terminal would act on if the text reached it raw. */
const ESCAPES = '\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007\u001b[2J\u009b31m';
/** Every kind of ping, markdown, control and bidi character, a link and surrogate pairs in one string. */
const HOSTILE_TEXT =
  `${HOSTILE_NAME} @here <@${IDS.profileUser}> <@!${IDS.profileUser}> <#${freshGuild.id}> ` +
  `||spoiler|| __under__ # heading\n> quote ${CONTROLS} ${ESCAPES} ${RLO}txet\u202c \u2066isolate\u2069 🤖👨‍👩‍👧`;
/** 10 kB and more of it: cut anywhere, mid-escape or mid-pair. */
const HOSTILE_LONG = HOSTILE_TEXT.repeat(Math.ceil(10_000 / HOSTILE_TEXT.length));

function bot(h: Harness, ref: string, timeoutMs: number): Promise<Answer> {
  return h.run(
    { guildId: freshGuild.id, name: 'bot', user: newUserRef('hostile'), options: [optionString('ref', ref)] },
    timeoutMs,
  );
}

function up(h: Harness, timeoutMs: number): Promise<Answer> {
  return h.run({ guildId: freshGuild.id, name: 'up', user: newUserRef('hostile') }, timeoutMs);
}

/** A copy of the sample bot (kerdoku) under another ID and short code. */
function seedBot(h: Harness, id: string, shortCode: string): void {
  const sample = h.emu.state.bots.get(IDS.plainBot);
  if (!sample) throw new Error('the sample bot is missing');
  h.emu.state.bots.set(id, { ...structuredClone(sample), id, shortCode });
}

/** The text of every message sent for the answer (content and embeds). */
function shownText(answer: Answer): string {
  return sentMessages(answer.requests).map(visibleText).join('\n');
}

/** The one private message the answer left, or a problem. */
function privateEmbedOf(answer: Answer, c: Checks, what: string): { title: string; description: string } {
  const live = liveMessages(answer.view);
  c.that(
    live.length === 1 && live.every(isEphemeral),
    `${what}: left ${live.length} message(s), not 1 private`,
  );
  const embed = firstEmbed(live[0]);
  return { title: embed?.title ?? '', description: embed?.description ?? '' };
}

/** ms from sending the command to its final answer reaching Discord. */
function answeredAfter(answer: Answer): number {
  const final = answer.requests.filter(isFinalAnswer).at(-1);
  return final ? Math.round(final.at - answer.handle.sentAt) : Number.POSITIVE_INFINITY;
}

/**
 * What is wrong with the messages sent for the answer: one that can ping (allowed_mentions, a raw
 * mass or role mention, a user mention but of `users`, which is shown and not pinged), one over a
 * Discord limit, a control or bidi character shown. [] when nothing is.
 */
function shownProblems(answer: Answer, what: string, users: readonly string[] = []): string[] {
  return sentMessages(answer.requests).flatMap((sent) => {
    const pings = mentionProblems(sent).map((p) => `${what}: ${p}`);
    if (pings.length > 0) return pings;
    // A Components V2 message is checked as a layout (its own limits), the others as embeds.
    const rendered = (
      isLayoutMessage(sent) ? { layout: sent.components } : { embeds: [], components: [], ...sent }
    ) as Parameters<typeof expectWithinLimits>[0];
    try {
      expectWithinLimits(rendered);
      expectNoPing(rendered, users);
      return [];
    } catch (err) {
      return [`${what}: ${message(err).split('\n')[0]}`];
    }
  });
}

/** Log lines at warn or above, as `level msg`. */
function loudLines(h: Harness, from: number): string[] {
  return h
    .entries()
    .slice(from)
    .filter((e) => e.level >= LEVEL.warn)
    .map((e) => `${e.level} ${String(e.msg)}`);
}

// ---- H1 -----------------------------------------------------------------------------------------

const PATH_IDS = [`../guilds/${freshGuild.id}`, '../users/@me?x=', '..%2Fguilds%2F1'] as const;
/** The sample bot as Discord knows it: a real ID gets its name and avatar from there. */
const KERDOKU = makeUser({ id: IDS.plainBot, username: 'kerdoku', global_name: 'Kerdoku', bot: true });

const pathIdRow: Row = {
  id: 'H1',
  fault: "directory: a bot's id is a path (../guilds/…, ../users/@me?x=, ..%2Fguilds%2F1)",
  expected:
    'card shown by its short code, no comments button, Discord asked nothing but the answer, ≤ 1 warn line; a real ID still named by Discord',
  timeoutMs: 15_000,
  run: () =>
    inHarness({ users: [KERDOKU] }, async (h, c) => {
      const seen: string[] = [];
      for (const [i, id] of PATH_IDS.entries()) {
        const code = `hostile${i}`;
        seedBot(h, id, code);
        const from = h.discord.requests.length;
        const logFrom = h.entries().length;
        const answer = await bot(h, code, 8_000);
        const sent: RecordedRestRequest[] = h.discord.requests.slice(from);
        c.equal(answer.outcome, 'shown', `/bot with id ${id}`);
        // No identity from Discord: the card is named by its short code, without a thumbnail.
        const card = firstEmbed(answer.view.original);
        c.equal(card?.title, `Bot ${code}`, `the card of id ${id}`);
        c.equal(card?.thumbnail, undefined, `the thumbnail of id ${id}`);
        // The ID cannot travel in a custom_id: no comments button.
        const labels = answer.view.original ? buttonsOf(answer.view.original).map((b) => b.label) : [];
        c.that(!labels.includes('Comments'), `a Comments button on the card of id ${id}`);
        const stray = sent.filter((r) => !INTERACTION_ROUTE.test(r.path) || r.query !== '');
        c.none(
          stray.map((r) => `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`),
          `requests to other Discord routes (id ${id})`,
        );
        const loud = loudLines(h, logFrom);
        c.that(loud.length <= 1, `lines at warn or above (id ${id}): ${loud.join(' | ')}`);
        seen.push(
          `${JSON.stringify(id)}: ${answer.outcome}, ${sent.length} requests to Discord ` +
            `(${stray.length} elsewhere), ${loud.length} warn line(s)`,
        );
      }
      // The control: a real ID still gets its name (and avatar) from Discord, one GET of the user.
      const from = h.discord.requests.length;
      const real = await bot(h, 'kerdoku', 8_000);
      const gets = h.discord.requests
        .slice(from)
        .filter((r) => r.method === 'GET')
        .map((r) => r.path);
      c.equal(firstEmbed(real.view.original)?.title, 'Bot Kerdoku', 'the card of the real ID');
      c.equal(gets, [`/users/${IDS.plainBot}`], 'GETs to Discord for the real ID');
      seen.push(`real id: ${real.outcome}, GET ${gets.join(', ')}`);
      return seen.join('; ');
    }),
};

// ---- H2 -----------------------------------------------------------------------------------------

const DRIP_TIMEOUT_MS = 1_000;
/** The bot's defaults: two retries, backoffs of at most 250 and 500 ms. */
const DRIP_ATTEMPTS = 3;
const DRIP_BOUND_MS = DRIP_TIMEOUT_MS * DRIP_ATTEMPTS + 750 + 2_000;

const dripRow: Row = {
  id: 'H2',
  fault: `directory: a body dripped a byte every 400 ms, timeout ${DRIP_TIMEOUT_MS / 1000} s (/bot)`,
  expected: `private "not answering" within ${DRIP_BOUND_MS / 1000} s`,
  timeoutMs: 20_000,
  run: async () => {
    const hostile = await startHostileServer();
    const close = track(() => hostile.close());
    hostile.handle((_req, res) => drip(res, { everyMs: 400 }));
    try {
      return await inHarness(
        { env: { DIRECTORY_API_URL: hostile.url, DIRECTORY_TIMEOUT_MS: String(DRIP_TIMEOUT_MS) } },
        async (h, c) => {
          const answer = await bot(h, 'kerdoku', DRIP_BOUND_MS + 3_000);
          c.equal(answer.outcome, 'error:Unavailable', 'outcome');
          const { description } = privateEmbedOf(answer, c, '/bot');
          c.equal(description, `❌ ${EN('errors.unavailable')}`, 'answer');
          const ms = answeredAfter(answer);
          c.that(ms < DRIP_BOUND_MS, `answered after ${ms} ms, not within ${DRIP_BOUND_MS} ms`);
          const attempts = hostile.requests.filter((r) => r.startsWith('GET /v2/bot/')).length;
          c.equal(attempts, DRIP_ATTEMPTS, 'attempts');
          return `${answer.outcome}, private "not answering" after ${ms} ms, ${attempts} attempts`;
        },
      );
    } finally {
      await close();
    }
  },
};

// ---- H3 -----------------------------------------------------------------------------------------

const DAY_S = 86_400;
const BUSY = /^The directory is busy\. Try again <t:(\d+):R>\.$/;

const dayLongRetryRow: Row = {
  id: 'H3',
  fault: 'directory: 429 with Retry-After: 86400 (/up)',
  expected: 'private "busy, try again <t:…:R>" a day on, at once; no up',
  timeoutMs: 15_000,
  run: () =>
    inHarness({}, async (h, c) => {
      h.emu.faults.add({
        kind: 'rate-limit',
        retryAfterMs: DAY_S * 1000,
        method: 'POST',
        path: /^\/server$/,
      });
      const bumpsBefore = bumpsOf(h.emu, IDS.serverFresh);
      const sentAtS = Math.floor(Date.now() / 1000);
      const answer = await up(h, 5_000);
      c.equal(answer.outcome, 'error:RateLimited', 'outcome');
      const { title, description } = privateEmbedOf(answer, c, '/up');
      c.equal(title, `❌ ${EN('up.title.error')}`, 'title');
      const when = Number(BUSY.exec(description)?.[1] ?? Number.NaN);
      c.that(when >= sentAtS + DAY_S - 1, `answer ${JSON.stringify(description)}: not "busy" until a day on`);
      const ms = answeredAfter(answer);
      c.that(ms < 3_000, `answered after ${ms} ms`);
      // The one POST refused, and nothing else asked of the directory (no retry, no look-up).
      const asked = h.emu.requests.map((r) => `${r.method} ${r.path} ${r.status}`);
      c.equal(asked, ['POST /v2/server 429'], 'requests to the directory');
      const posts = asked.filter((r) => r.startsWith('POST '));
      c.equal(bumpsOf(h.emu, IDS.serverFresh), bumpsBefore, 'bumps');
      return `${answer.outcome} after ${ms} ms, "try again <t:${when}:R>" (${when - sentAtS} s on), ${posts.length} POST, bumps unchanged`;
    }),
};

// ---- H4 -----------------------------------------------------------------------------------------

const ABSURD_TIMES = [1e300, 8.64e15 + 1] as const;

const absurdTimesRow: Row = {
  id: 'H4',
  fault: 'directory: timeToNextUpInMs 1e300 and 8.64e15+1, comments dated 1e300 and updated 8.64e15+1',
  expected: 'answered, no NaN; both comments "time unknown"',
  timeoutMs: 15_000,
  run: () =>
    inHarness({}, async (h, c) => {
      const seen: string[] = [];
      for (const next of ABSURD_TIMES) {
        // The emulator answers `last up + cooldown` as the next up (epoch milliseconds).
        h.emu.state.ups.set(IDS.serverFresh, next - DEFAULT_COOLDOWN_MS);
        const answer = await up(h, 8_000);
        c.equal(answer.outcome, 'cooldown', `/up with next up at ${next}`);
        const text = shownText(answer);
        const bad = NOT_A_TIME.exec(text);
        c.that(bad === null, `/up with next up at ${next} shows ${JSON.stringify(bad?.[0])}`);
        const field = firstEmbed(liveMessages(answer.view)[0])?.fields?.find(
          (f) => f.name === EN('up.nextUp'),
        );
        seen.push(
          `/up ${next}: ${answer.outcome}, next-up field ${field ? JSON.stringify(field.value) : 'left out'}`,
        );
      }
      h.emu.state.comments.bots.set(IDS.plainBot, [
        { userID: IDS.profileUser, text: 'far future', vote: 1, isUpdated: false, createdAt: 1e300 },
        {
          userID: IDS.otherProfileUser,
          text: 'just past',
          vote: -1,
          isUpdated: true,
          updatedAt: 8.64e15 + 1,
        },
      ]);
      const page = await h.click(
        { guildId: freshGuild.id, customId: `comments:o:b:${IDS.plainBot}:0` },
        8_000,
      );
      c.equal(page.outcome, 'page:0', 'the comments page');
      const text = shownText(page);
      const bad = NOT_A_TIME.exec(text);
      c.that(bad === null, `the comments page shows ${JSON.stringify(bad?.[0])}`);
      const unknowns = text.split(` · ${EN('comments.timeUnknown')}`).length - 1;
      const both = text.includes('far future') && text.includes('just past') && unknowns === 2;
      c.that(both, `the comments are not both shown with "${EN('comments.timeUnknown')}" (${unknowns})`);
      seen.push(`comments: ${page.outcome}, "time unknown" ${unknowns} time(s)`);
      return seen.join('; ');
    }),
};

// ---- H5 -----------------------------------------------------------------------------------------

const hostileTextRow: Row = {
  id: 'H5',
  fault: 'directory: mentions, markdown, ESC/C1/bidi, 10 kB in a card and the /up message',
  expected: 'answered, pings nobody, within Discord limits, no control character',
  timeoutMs: 15_000,
  run: () =>
    inHarness({}, async (h, c) => {
      const kerdoku = h.emu.state.bots.get(IDS.plainBot);
      if (!kerdoku) throw new Error('the sample bot is missing');
      kerdoku.information.shortDescription = HOSTILE_TEXT;
      kerdoku.information.longDescription = HOSTILE_LONG;
      kerdoku.information.tags = [HOSTILE_TEXT, '@everyone', `<@&${IDS.serverFresh}>`, '`', HOSTILE_LONG];
      h.emu.faults.add({ kind: 'not-updated', method: 'POST', path: /^\/server$/, message: HOSTILE_LONG });
      const card = await bot(h, 'kerdoku', 8_000);
      const upAnswer = await up(h, 8_000);
      const seen: string[] = [];
      for (const [what, answer, outcome] of [
        ['/bot', card, 'shown'],
        ['/up', upAnswer, 'notUpdated'],
      ] as const) {
        c.equal(answer.outcome, outcome, `${what} outcome`);
        // The card names its developers as mentions; allowed_mentions keeps them from pinging.
        const developers = what === '/bot' ? kerdoku.information.developers : [];
        c.none(shownProblems(answer, what, developers), `${what} shown wrong`);
        const sent = sentMessages(answer.requests);
        const sizes = sent.map((m) =>
          isLayoutMessage(m)
            ? `layout text ${viewOf(m).prose.join('').length} of 4000 chars`
            : `embed ${((m.embeds ?? []) as APIEmbed[]).map(embedTotal).join('+')} of 6000 chars`,
        );
        seen.push(`${what}: ${answer.outcome}, ${sent.length} message(s), ${sizes.join(', ')}`);
      }
      return `${seen.join('; ')}; nothing can ping, within limits, no control character shown`;
    }),
};

// ---- H6 -----------------------------------------------------------------------------------------

const ERROR_MESSAGE = `@everyone ${ESCAPES} <@&${IDS.serverFresh}> ${RLO}nimda`;

const errorMessageRow: Row = {
  id: 'H6',
  fault: "directory: an error's message with ESC/OSC and @everyone (500 on /bot, 400 on /up)",
  expected: "the bot's own wording; the message never raw, pings nobody",
  timeoutMs: 15_000,
  run: () =>
    inHarness({}, async (h, c) => {
      h.emu.faults.add({ kind: 'status', status: 500, path: /^\/bot\//, message: ERROR_MESSAGE });
      h.emu.faults.add({
        kind: 'status',
        status: 400,
        method: 'POST',
        path: /^\/server$/,
        message: ERROR_MESSAGE,
      });
      const card = await bot(h, 'kerdoku', 8_000);
      const upAnswer = await up(h, 8_000);
      c.equal(card.outcome, 'error:Unavailable', '/bot outcome');
      c.equal(privateEmbedOf(card, c, '/bot').description, `❌ ${EN('errors.unavailable')}`, '/bot answer');
      c.equal(upAnswer.outcome, 'error:BadRequest', '/up outcome');
      const { description } = privateEmbedOf(upAnswer, c, '/up');
      const wording = EN('errors.badRequest', { reason: '' });
      c.that(
        description.startsWith(wording),
        `/up answer ${JSON.stringify(description)} is not the bot's wording`,
      );
      for (const [what, answer] of [
        ['/bot', card],
        ['/up', upAnswer],
      ] as const) {
        c.none(shownProblems(answer, what), `${what} shown wrong`);
      }
      return `/bot ${card.outcome} "not answering"; /up ${upAnswer.outcome} ${JSON.stringify(description.slice(0, 70))}…`;
    }),
};

export const hostileDirectory: Family = {
  title: 'a hostile directory',
  stage: 2,
  rows: [pathIdRow, dripRow, dayLongRetryRow, absurdTimesRow, hostileTextRow, errorMessageRow],
};

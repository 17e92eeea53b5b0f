/**
 * What a message costs to build (issue 24's "card render cost before and after"): each message
 * the bot lays out, rendered from the directory's published samples (and one hostile record of
 * 10 kB strings) and serialized as discord.js sends it (`JSON.stringify`), ROUNDS rounds of
 * RENDERS renders after a warm-up, in one process. Reports the median time per message of the
 * rounds and the body's size in bytes. The same script runs on a build from before Components V2
 * (it uses only what both have: the renderers' names and arguments did not change), so the two
 * tables compare one to one; `bench/results/2026-11-27-components-v2.md` has both.
 *
 *   npm run build && node dist/bench/render-cost.js [--rounds 5] [--renders 2000] [--json]
 *
 * Run from the repository's root (it reads test/fixtures/directory-samples).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  botReferenceListSchema,
  botSchema,
  commentListSchema,
  profileSchema,
  serverSchema,
} from '../src/directory/schemas.js';
import { renderLeaderboard } from '../src/features/history/leaderboard.js';
import { renderOverview } from '../src/features/settings/render.js';
import { renderEvent } from '../src/features/webhooks/render.js';
import { translator } from '../src/i18n/index.js';
import { renderBotCard, renderProfileCard, renderServerCard } from '../src/render/cards.js';
import { renderCommentsPage } from '../src/render/comments.js';
import { median } from './lib/stats.js';

const sample = (name: string): unknown =>
  JSON.parse(readFileSync(join(process.cwd(), 'test', 'fixtures', 'directory-samples', name), 'utf8'));

const en = translator('en-US');
const ru = translator('ru');
const bot = botSchema.parse(sample('bot.json'));
const server = serverSchema.parse(sample('server.json'));
const profile = profileSchema.parse(sample('profile.json'));
const bots = botReferenceListSchema.parse(sample('developer-bots.json'));
const comments = commentListSchema.parse(sample('bot-comments.json'));
const HOSTILE = `@everyone <@&1> **bold** [x](javascript:alert(1))\u202e\n# head\n${'x'.repeat(10_000)}`;
const identity = {
  name: 'Kerdoku',
  avatarUrl: 'https://cdn.discordapp.com/avatars/724663360934772797/abc.png',
};
const snowflake = (n: number): string => String(100_000_000_000_000_000n + BigInt(n));

/** What each message is made of: its renderer called as the bot calls it. */
const MESSAGES: Array<{ name: string; render: () => unknown }> = [
  { name: '/bot card (sample)', render: () => renderBotCard(bot, en, 'en-US', identity) },
  {
    name: '/bot card (hostile, 10 kB strings)',
    render: () =>
      renderBotCard(
        {
          ...bot,
          shortDescription: HOSTILE,
          longDescription: HOSTILE,
          tags: Array.from({ length: 100 }, () => HOSTILE.slice(0, 60)),
          developers: Array.from({ length: 50 }, (_, i) => snowflake(i)),
        },
        ru,
        'ru',
        identity,
      ),
  },
  { name: '/server card (sample)', render: () => renderServerCard(server, en, 'en-US') },
  { name: '/profile card (sample, its bots)', render: () => renderProfileCard(profile, bots, en, identity) },
  {
    name: 'comments page (5 comments)',
    render: () =>
      renderCommentsPage(
        'bot',
        bot.id,
        'kerdoku',
        [...comments, ...comments, ...comments].slice(0, 5),
        0,
        en,
      ),
  },
  {
    name: '/leaderboard (top 10, no chart)',
    render: () =>
      renderLeaderboard(
        {
          period: 'month',
          since: 0,
          top: Array.from({ length: 10 }, (_, i) => ({ userId: snowflake(i), ups: 100 - i, firstAt: i })),
          asker: { rank: 3, ups: 98 },
          totalUps: 1_000,
          members: 40,
        },
        en,
      ),
  },
  {
    name: '/settings show (all set, a problem)',
    render: () =>
      renderOverview(
        {
          settings: {
            guildId: snowflake(1),
            reminderChannelId: snowflake(2),
            reminderRoleId: snowflake(3),
            reminderTemplate: '{role} **{server}** can be raised again: {command}',
            publicLanguage: 'auto',
            timeZone: null,
            thanksTemplate: null,
            reminderEarlyMs: null,
            reminderRepeat: null,
            digest: null,
            liveChannelId: null,
            problem: { reason: 'missing-permission:SendMessages', at: 1_700_000_000_000 },
            updatedAt: 0,
          },
          reminder: undefined,
          guildLocale: 'ru',
          webhook: undefined,
        },
        en,
        { title: en('settings.title.show'), color: 0x5865f2 },
      ),
  },
  {
    name: 'webhook announcement (an edited comment)',
    render: () =>
      renderEvent(
        {
          kind: 'comment',
          change: 'edit',
          userId: snowflake(9),
          at: 1_700_000_000_000,
          vote: { old: 1, new: -1 },
          text: { old: 'Great bot, **really**', new: 'Changed my mind' },
          reason: null,
        },
        en,
      ),
  },
];

export interface RenderCost {
  name: string;
  /** Median over the rounds of the time per message (render and JSON), µs. */
  microseconds: number;
  /** The serialized body's size. */
  bytes: number;
}

export function measure(rounds: number, renders: number): RenderCost[] {
  return MESSAGES.map(({ name, render }) => {
    let bytes = 0;
    for (let i = 0; i < Math.min(renders, 500); i++) bytes = JSON.stringify(render()).length;
    const perRound: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const started = process.hrtime.bigint();
      let sink = 0;
      for (let i = 0; i < renders; i++) sink += JSON.stringify(render()).length;
      const ns = Number(process.hrtime.bigint() - started);
      if (sink === 0) throw new Error('nothing rendered');
      perRound.push(ns / renders / 1_000);
    }
    return { name, microseconds: median(perRound), bytes };
  });
}

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    renders: { type: 'string', default: '2000' },
    json: { type: 'boolean', default: false },
  },
});
const results = measure(Number(values.rounds), Number(values.renders));
if (values.json) console.log(JSON.stringify(results));
else {
  console.log('| message | µs per message (render + JSON) | body bytes |');
  console.log('|---|---|---|');
  for (const r of results) console.log(`| ${r.name} | ${r.microseconds.toFixed(1)} | ${r.bytes} |`);
}

/** /leaderboard [period]: who keeps this server up (features/history/leaderboard.ts). */

import { CHART_MEMBERS, upsChart } from '../src/features/history/chart.js';
import {
  DEFAULT_PERIOD,
  isPeriod,
  type Period,
  periodStart,
  renderLeaderboard,
  type StreakBoard,
  standing,
  streakBoard,
} from '../src/features/history/leaderboard.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { BotDeps, SlashCommand } from '../src/interactions/types.js';
import { UP_HISTORY_MS } from '../src/store/history.js';
import { leaderboardCommand } from './definitions.js';

/**
 * The streaks and the fastest ups, from the server's whole history, its time zone and the window
 * open now. A store that fails costs the board (one warn line), never the leaderboard.
 */
async function streaks(
  deps: BotDeps,
  guildId: string,
  userId: string,
  period: Period,
  now: number,
): Promise<StreakBoard | undefined> {
  try {
    const [ups, settings, reminder] = await Promise.all([
      deps.history.timed(guildId, now - UP_HISTORY_MS),
      deps.settings.get(guildId),
      deps.reminders.getGuild(guildId),
    ]);
    return streakBoard(ups, {
      since: periodStart(period, now),
      userId,
      timeZone: settings?.timeZone ?? 'UTC',
      nextPossibleAt: reminder?.nextUpAt ?? null,
      now,
    });
  } catch (err) {
    deps.logger.warn({ err, guildId }, 'the streaks could not be read; the leaderboard goes without them');
    return undefined;
  }
}

export const leaderboard: SlashCommand = {
  data: leaderboardCommand,
  guildOnly: true,
  async execute({ interaction, deps, t, reply }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    const given = interaction.options.getString('period');
    const period = isPeriod(given) ? given : DEFAULT_PERIOD;
    const now = deps.now();
    const [s, board] = await Promise.all([
      standing(deps.history, guildId, interaction.user.id, period, now),
      streaks(deps, guildId, interaction.user.id, period, now),
    ]);
    const chart =
      s.members === 0
        ? null
        : await upsChart(
            {
              history: deps.history,
              charts: deps.charts,
              name: async (userId) => (await deps.discord.identity(userId))?.name ?? null,
            },
            {
              guildId,
              since: s.since,
              now,
              named: s.top.slice(0, CHART_MEMBERS).map((m) => m.userId),
              title: t(`leaderboard.title.${period}`),
            },
            t,
          ).catch((err: unknown) => {
            deps.logger.warn(
              { err, guildId },
              'the leaderboard chart could not be drawn; answering without it',
            );
            return null;
          });
    await reply.public(renderLeaderboard(s, t, chart, board));
    return s.members === 0 ? 'empty' : 'shown';
  },
};

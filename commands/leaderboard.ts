/** /leaderboard [period]: who keeps this server up (features/history/leaderboard.ts). */

import { CHART_MEMBERS, upsChart } from '../src/features/history/chart.js';
import {
  DEFAULT_PERIOD,
  isPeriod,
  renderLeaderboard,
  standing,
} from '../src/features/history/leaderboard.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { leaderboardCommand } from './definitions.js';

export const leaderboard: SlashCommand = {
  data: leaderboardCommand,
  guildOnly: true,
  async execute({ interaction, deps, t, reply }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    const given = interaction.options.getString('period');
    const period = isPeriod(given) ? given : DEFAULT_PERIOD;
    const now = deps.now();
    const s = await standing(deps.history, guildId, interaction.user.id, period, now);
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
    await reply.public(renderLeaderboard(s, t, chart));
    return s.members === 0 ? 'empty' : 'shown';
  },
};

/** /leaderboard [period]: who keeps this server up (features/history/leaderboard.ts). */
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
    const s = await standing(deps.history, guildId, interaction.user.id, period, deps.now());
    await reply.public(renderLeaderboard(s, t));
    return s.members === 0 ? 'empty' : 'shown';
  },
};

/** The explicit registry: no filesystem globbing, so the set is deterministic and importable in tests. */
import type { Registry } from '../src/interactions/types.js';
import { bot } from './bot.js';
import { comments } from './comments.js';
import { DEFERRAL_RULES } from './definitions.js';
import { directoryCard } from './directory-card.js';
import { help } from './help.js';
import { leaderboard } from './leaderboard.js';
import { notifyMe } from './notify-me.js';
import { profile } from './profile.js';
import { remind } from './remind.js';
import { reminderActions } from './reminder-actions.js';
import { server } from './server.js';
import { settings } from './settings.js';
import { setup, setupButton, setupForm } from './setup.js';
import { up } from './up.js';

export const registry: Registry = {
  commands: [up, bot, server, profile, settings, leaderboard, setup, help],
  userCommands: [directoryCard],
  buttons: [comments, remind, reminderActions, notifyMe, setupButton],
  modals: [setupForm],
  deferrals: DEFERRAL_RULES,
};

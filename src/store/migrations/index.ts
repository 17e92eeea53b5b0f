/**
 * Every migration, in order, listed by hand (no folder scanning: the set is what the code says).
 * Names sort in the order they run; a released migration is never edited or renamed.
 */
import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './001-initial.js';
import { directoryLimits } from './002-directory-limits.js';
import { hosts } from './003-hosts.js';
import { history } from './004-history.js';
import { webhooks } from './005-webhooks.js';
import { journalGuildLocale } from './006-journal-guild-locale.js';
import { hostInstances } from './007-host-instances.js';
import { webhookIntake } from './008-webhook-intake.js';
import { traceParents } from './009-trace-parents.js';
import { reminderFollowups } from './010-reminder-followups.js';
import { gatewaySessions } from './011-gateway-sessions.js';
import { streaks } from './012-streaks.js';
import { reminderRepeats } from './013-reminder-repeats.js';
import { digestsRewards } from './014-digests-rewards.js';
import { streakNotices } from './015-streak-notices.js';
import { notifications } from './016-notifications.js';
import { welcomes } from './017-welcomes.js';
import { pendingReminders } from './018-pending-reminders.js';

export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '001-initial': initial,
  '002-directory-limits': directoryLimits,
  '003-hosts': hosts,
  '004-history': history,
  '005-webhooks': webhooks,
  '006-journal-guild-locale': journalGuildLocale,
  '007-host-instances': hostInstances,
  '008-webhook-intake': webhookIntake,
  '009-trace-parents': traceParents,
  '010-reminder-followups': reminderFollowups,
  '011-gateway-sessions': gatewaySessions,
  '012-streaks': streaks,
  '013-reminder-repeats': reminderRepeats,
  '014-digests-rewards': digestsRewards,
  '015-streak-notices': streakNotices,
  '016-notifications': notifications,
  '017-welcomes': welcomes,
  '018-pending-reminders': pendingReminders,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...MIGRATIONS }),
};

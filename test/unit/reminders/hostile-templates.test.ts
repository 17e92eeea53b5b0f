/**
 * The volume of hostile reminder templates: 1,000 of test/support/hostile-templates.ts, each with
 * a hostile server name, with and without a role, in English and Russian, sent by the bot's own
 * sender (features/reminders/send.ts, template.ts) to a REST client that keeps the bodies. Each
 * body is judged as the e2e judges what reached the Discord stand-in: Discord's rules for the
 * message, and whom the stand-in says it pings with everything pingable (every role named is
 * mentionable, the bot may mention everyone): no one but the configured role. The server's name
 * brings no mention of its own. The whole path (store, scheduler, discord.js, the stand-in) takes
 * 200 on each engine in test/e2e/reminders.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DiscordReminderSender } from '../../../src/features/reminders/send.js';
import { checkReminderTemplate } from '../../../src/features/reminders/template.js';
import { defaults } from '../../../src/features/settings/settings.js';
import { createLogger } from '../../../src/log/logger.js';
import type { Claim, Reminder } from '../../../src/store/reminders.js';
import type { GuildSettings } from '../../../src/store/settings.js';
import { textDisplayContents } from '../../discord/components-v2.js';
import { makeGuild, makeRole, pingsOf } from '../../discord/index.js';
import { validateMessage } from '../../discord/interactions.js';
import { ALL_PERMISSIONS } from '../../discord/permissions.js';
import { recordingRest } from '../../support/announcer.js';
import { hostileTemplate } from '../../support/hostile-templates.js';
import { hostileTexts } from '../../support/hostile-texts.js';
import { viewOf } from '../../support/layout-view.js';
import { LEVEL, LogSink } from '../../support/logs.js';

const COUNT = 1_000;
const GUILD = '300000000000000077';
const CHANNEL = '300000000000000078';
const ROLE = '300000000000000079';
const NOW = Date.UTC(2026, 0, 15, 12);
// The templates name ROLE (by {role}) and 1234567890123456789 (as a role and as a user): both
// roles mentionable, and the bot may mention everyone, so only allowed_mentions keeps them quiet.
const guild = makeGuild({
  id: GUILD,
  roles: [
    makeRole({ id: ROLE, mentionable: true }),
    makeRole({ id: '1234567890123456789', mentionable: true }),
  ],
});
const EVERYTHING = BigInt(ALL_PERMISSIONS);

/** Server names: the e2e's two, then hostile texts cut to Discord's 100 characters. */
const NAMES = [
  'Reminder Guild @everyone <@&1>',
  'Русский сервер',
  ...hostileTexts(COUNT - 2, 38).map((text) => text.slice(0, 100)),
];

/** Mentions as Discord finds them in a text, sorted: what a server's name must not add to. */
function mentionsIn(text: string): string[] {
  return [...text.matchAll(/<@[!&]?\d+>|@everyone|@here/g)].map((m) => m[0]).sort();
}

interface Case {
  template: string;
  name: string;
  roleId: string | null;
  locale: string;
  commandId: string | null;
}

/** The sender as the bot wires it, with a REST client that keeps what would be posted. */
function sender(now: () => Case) {
  const { rest, posted } = recordingRest();
  const sink = new LogSink();
  const settings = (): GuildSettings => ({
    ...defaults(GUILD, NOW),
    reminderChannelId: CHANNEL,
    reminderRoleId: now().roleId,
    reminderTemplate: now().template,
  });
  const send = new DiscordReminderSender({
    rest,
    settings: { get: async () => settings(), update: async () => settings() },
    commands: { id: async () => now().commandId },
    guild: () => ({ name: now().name, preferredLocale: now().locale }),
    roleDeleted: () => false,
    followups: { recordPost: async () => undefined },
    logger: createLogger({ level: 'debug', destination: sink }),
    now: () => NOW,
  });
  return { send, posted, sink };
}

const reminder: Reminder = {
  key: { kind: 'guild', guildId: GUILD },
  dueAt: NOW,
  state: 'claimed',
  claimedBy: 'me',
  claimExpiresAt: NOW + 60_000,
  nonce: 'nonce',
  sentAt: null,
  failure: null,
  updatedAt: NOW,
  traceParent: null,
};

describe('1,000 hostile reminder templates and server names, sent by the bot', () => {
  it('each posted, valid for Discord, pinging the configured role and no one else; the name adds no mention', async () => {
    let current: Case | undefined;
    const { send, posted, sink } = sender(() => current!);
    const problems: string[] = [];
    const post = async (c: Case, i: number): Promise<Record<string, unknown> | undefined> => {
      current = c;
      const claim: Claim = {
        key: reminder.key,
        dueAt: NOW,
        by: 'me',
        nonce: `nonce-${i}`,
        expiresAt: NOW + 60_000,
      };
      const before = posted.length;
      const outcome = await send.send(reminder, claim);
      if (outcome.kind !== 'sent') problems.push(`${i}: ${JSON.stringify(outcome)}`);
      if (posted.length !== before + 1) problems.push(`${i}: ${posted.length - before} messages posted`);
      return posted[before];
    };
    for (let i = 0; i < COUNT; i++) {
      const c: Case = {
        template: hostileTemplate(i),
        name: NAMES[i] ?? '',
        roleId: i % 2 === 0 ? ROLE : null,
        locale: Math.floor(i / 2) % 2 === 0 ? 'en-US' : 'ru',
        commandId: i % 3 === 0 ? null : '300000000000000080',
      };
      // Every one a template an admin can set (/settings reminder-template).
      if (!checkReminderTemplate(c.template).ok) problems.push(`${i}: the template is refused`);
      const body = await post(c, i);
      if (!body) continue;
      const invalid = validateMessage(body, []);
      if (invalid) problems.push(`${i}: refused by Discord: ${JSON.stringify(invalid.body)}`);
      const expected = c.roleId ? { parse: [], roles: [c.roleId] } : { parse: [] };
      if (JSON.stringify(body.allowed_mentions) !== JSON.stringify(expected))
        problems.push(`${i}: allowed_mentions ${JSON.stringify(body.allowed_mentions)}`);
      const text = textDisplayContents(body.components).join('\n');
      const pings = pingsOf(text, body.allowed_mentions, guild, EVERYTHING);
      if (pings.everyone) problems.push(`${i}: pings everyone`);
      if (pings.users.length > 0) problems.push(`${i}: pings users ${pings.users.join(' ')}`);
      if (!pings.roles.every((r) => r === c.roleId))
        problems.push(`${i}: pings roles ${pings.roles.join(' ')}`);
      const length = viewOf(body).prose.join('').length;
      if (length > 4_000) problems.push(`${i}: ${length} characters of text, over Discord's 4000`);
      // The same reminder for a server with a plain name: the hostile name adds no mention.
      const plain = await post({ ...c, name: 'Plain server' }, i);
      const plainText = textDisplayContents(plain?.components).join('\n');
      if (JSON.stringify(mentionsIn(text)) !== JSON.stringify(mentionsIn(plainText)))
        problems.push(`${i}: the name ${JSON.stringify(c.name)} brings ${JSON.stringify(mentionsIn(text))}`);
    }
    expect(problems).toEqual([]);
    expect(posted).toHaveLength(2 * COUNT);
    expect(sink.entries.filter((e) => e.level >= LEVEL.warn)).toEqual([]);
  });
});

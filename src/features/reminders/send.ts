/**
 * What a due reminder posts, and what a failure means for the server's settings.
 *
 * - The server's reminder: in its reminder channel, the admins' template or a localized default,
 *   in the server's public language, in a Components V2 container; `allowed_mentions` names the
 *   configured role and nothing else, so `@everyone` in a template or a server's name pings no one.
 *   Its heads-up and repeats, when the server wants them (cycle.ts), each replace the post before.
 * - A member's reminder: a DM; with DMs closed (50007), a mention of that member (and of no one
 *   else) in the reminder channel; with no reminder channel, given up and recorded.
 *
 * Every post carries the claim's nonce with `enforce_nonce`: a reminder sent again after a crash
 * is dropped by Discord. A channel deleted, access or a permission lost, the role deleted: the
 * reminder is recorded as failed and the server's settings keep the problem for /settings show and
 * the next /up of a manager.
 */
import type { APIMessageTopLevelComponent, REST } from 'discord.js';
import type { CommandMentions } from '../../discord/command-mentions.js';
import { failedPost, type GuildFactsLookup, settleFailedPost } from '../../discord/guild-posts.js';
import {
  deleteMessage,
  editMessage,
  type OutgoingMessage,
  type PostFailure,
  postMessage,
  sendDirectMessage,
} from '../../discord/messages.js';
import { type Translate, translator } from '../../i18n/index.js';
import { publicLocale, publicTranslator } from '../../i18n/public-language.js';
import type { Logger } from '../../log/logger.js';
import { COLORS } from '../../render/colors.js';
import type { ButtonRow } from '../../render/components.js';
import { delayText } from '../../render/delay.js';
import { container, fitLayout, separator, text as textDisplay } from '../../render/layout.js';
import { fillPlaceholders } from '../../render/template.js';
import type { Followup, FollowupRepository } from '../../store/followups.js';
import type { Claim, Reminder } from '../../store/reminders.js';
import type { GuildProblem } from '../../store/schema.js';
import type { GuildSettings, SettingsRepository } from '../../store/settings.js';
import type { SendOutcome } from '../../tasks/outbox.js';
import { type CyclePost, cycleAgain, cyclePost, replaces } from './cycle.js';
import { notifyRow, reminderActionRow } from './remind-button.js';
import type { ReminderSender } from './scheduler.js';
import { fillTemplate, placeholderValues } from './template.js';

/**
 * A reminder as posted: its text in a green container (Components V2). A role or member mention in
 * the text pings as in plain content, by the message's allowed_mentions alone.
 */
export function reminderLayout(text: string, actions?: ButtonRow): APIMessageTopLevelComponent[] {
  return fitLayout([container(COLORS.success, [textDisplay(text), actions ?? null])]);
}

export interface SenderOptions {
  rest: REST;
  settings: Pick<SettingsRepository, 'get' | 'update'>;
  commands: Pick<CommandMentions, 'id'>;
  guild: GuildFactsLookup;
  /** Whether the gateway told of the role's deletion (roles.ts). */
  roleDeleted: (guildId: string, roleId: string) => boolean;
  /** Where each server reminder was posted, for its follow-up; none: reminders are not followed up. */
  followups?: Pick<FollowupRepository, 'recordPost'>;
  logger: Logger;
  now?: () => number;
}

export class DiscordReminderSender implements ReminderSender {
  readonly #o: SenderOptions;
  readonly #now: () => number;

  constructor(options: SenderOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  async send(reminder: Reminder, claim: Claim): Promise<SendOutcome> {
    const { guildId } = reminder.key;
    const settings = await this.#o.settings.get(guildId);
    if (reminder.key.kind === 'personal')
      return this.#personal(reminder.key.userId, guildId, settings, claim);
    const channelId = settings?.reminderChannelId;
    // Reminders off: nothing to post; the reminder is done for this next-up time.
    if (!settings || !channelId) return { kind: 'sent' };
    const cycle = claim.cycle ?? { nextUpAt: claim.dueAt, step: 0, headsUpAt: null, post: null };
    const now = this.#now();
    const post = cyclePost(claim.dueAt, cycle, settings, now);
    if (post.kind === 'done' || post.kind === 'wait') {
      const again = cycleAgain(post, cycle, settings, now);
      return again ? { kind: 'sent', again } : { kind: 'sent' };
    }
    const roleId = settings.reminderRoleId;
    if (roleId && this.#o.roleDeleted(guildId, roleId)) {
      // Not posted: a reminder that pings no one looks sent while nobody is told. The admins are.
      await this.#record(guildId, 'role-deleted');
      return { kind: 'failed', reason: 'role-deleted' };
    }
    const { text, shown, t } = await this.#serverText(guildId, settings, cycle.nextUpAt, post);
    const message: OutgoingMessage = {
      // A reminder that mentions a role lets members take or drop it ("Notify me").
      layout: reminderLayout(shown, roleId ? notifyRow(guildId, t) : undefined),
      allowedMentions: roleId ? { parse: [], roles: [roleId] } : { parse: [] },
      nonce: claim.nonce,
    };
    const posted = await postMessage(this.#o.rest, channelId, message);
    if (!posted.ok) return this.#failed(guildId, posted.failure);
    // The one before it in this cycle goes: one reminder in the channel, not a pile.
    const replaced = replaces(cycle, posted.messageId);
    if (replaced) await this.#delete(guildId, replaced);
    // Where it is and what it said: the first up after it edits it (followUp). How fast that up
    // was counts from when the up became possible (a heads-up) or from the first reminder.
    const postedAt =
      post.kind === 'heads-up'
        ? cycle.nextUpAt
        : post.kind === 'repeat' && replaced
          ? replaced.postedAt
          : this.#now();
    await this.#o.followups
      ?.recordPost(guildId, { channelId, messageId: posted.messageId, text, postedAt })
      .catch((err: unknown) => {
        this.#o.logger.warn({ err, guildId }, 'could not record where the reminder was posted');
      });
    const again = cycleAgain(post, cycle, settings, now);
    return again ? { kind: 'sent', again } : { kind: 'sent' };
  }

  /** Deletes the reminder a newer one replaced; one already gone is fine, a failure one warn line. */
  async #delete(guildId: string, post: { channelId: string; messageId: string }): Promise<void> {
    const deleted = await deleteMessage(this.#o.rest, post.channelId, post.messageId);
    if (!deleted.ok) {
      this.#o.logger.warn(
        { guildId, messageId: post.messageId, failure: deleted.failure },
        'could not delete the reminder a newer one replaced',
      );
    }
  }

  async #personal(
    userId: string,
    guildId: string,
    settings: GuildSettings | undefined,
    claim: Claim,
  ): Promise<SendOutcome> {
    const facts = await this.#o.guild(guildId);
    const locale = publicLocale(settings?.publicLanguage ?? 'auto', facts?.preferredLocale);
    const t = translator(locale);
    const command = await this.#command();
    const server = facts?.name ?? guildId;
    const text = fillTemplate(t('reminders.personal'), {
      roleId: null,
      ...command,
      server,
      time: claim.dueAt,
    });
    // The member's own reminder offers "Snooze 1 h" and "Stop", wherever it is posted.
    const actions = reminderActionRow(guildId, userId, t);
    const dm = await sendDirectMessage(this.#o.rest, userId, {
      layout: reminderLayout(text, actions),
      allowedMentions: { parse: [] },
      nonce: claim.nonce,
    });
    if (dm.ok) return { kind: 'sent' };
    if (dm.failure.kind !== 'dms-closed') return this.#failed(undefined, dm.failure);
    const channelId = settings?.reminderChannelId;
    if (!channelId) {
      this.#o.logger.info(
        { guildId, userId },
        'a personal reminder could not be sent: DMs closed, no reminder channel',
      );
      return { kind: 'failed', reason: 'dms-closed' };
    }
    const fallback = await postMessage(this.#o.rest, channelId, {
      layout: reminderLayout(`<@${userId}> ${text}`, actions),
      allowedMentions: { parse: [], users: [userId] },
      nonce: claim.nonce,
    });
    return fallback.ok ? { kind: 'sent' } : this.#failed(guildId, fallback.failure);
  }

  /**
   * A reminder followed through: its message edited to say who upped and how long after it, in
   * the server's public language; the reminder's text kept, nobody pinged (allowed_mentions is
   * empty: the role's mention renders as its name). Once done, or given up when the message is
   * gone; tried again on Discord's 5xx.
   */
  async followUp(followup: Followup): Promise<SendOutcome> {
    const { guildId } = followup;
    const [settings, facts] = await Promise.all([this.#o.settings.get(guildId), this.#o.guild(guildId)]);
    const t = publicTranslator(settings, facts?.preferredLocale);
    const note = t('remind.upped', {
      user: `<@${followup.uppedBy}>`,
      after: delayText(followup.uppedAt - followup.postedAt, t),
    });
    const layout = fitLayout([
      container(COLORS.info, [textDisplay(followup.text), separator(), textDisplay(note)]),
    ]);
    const edited = await editMessage(this.#o.rest, followup.channelId, followup.messageId, {
      layout,
      allowedMentions: { parse: [] },
    });
    if (edited.ok) return { kind: 'sent' };
    if (edited.failure.kind === 'transient') return failedPost(edited.failure).outcome;
    return { kind: 'failed', reason: edited.failure.kind };
  }

  /**
   * The post's text in the server's public language, and that language's words: `text` as the
   * follow-up keeps it (the heads-up's, or the admins' template or the default), `shown` with a
   * repeat's line under it.
   */
  async #serverText(
    guildId: string,
    settings: GuildSettings,
    nextUpAt: number,
    post: Exclude<CyclePost, { kind: 'done' | 'wait' }>,
  ): Promise<{ text: string; shown: string; t: Translate }> {
    const facts = await this.#o.guild(guildId);
    const t = publicTranslator(settings, facts?.preferredLocale);
    const values = placeholderValues({
      roleId: settings.reminderRoleId,
      ...(await this.#command()),
      server: facts?.name ?? guildId,
      time: nextUpAt,
    });
    if (post.kind === 'heads-up') {
      // "In 10 minutes", in each reader's own words and time.
      const text = fillPlaceholders(t('reminders.headsUp'), {
        ...values,
        time: `<t:${Math.floor(nextUpAt / 1000)}:R>`,
      });
      return { text, shown: text, t };
    }
    const text = fillPlaceholders(settings.reminderTemplate ?? t('reminders.default'), values);
    if (post.kind === 'reminder') return { text, shown: text, t };
    return { text, shown: `${text}\n-# ${t('reminders.repeat', { n: post.n, of: post.of })}`, t };
  }

  async #command(): Promise<{ commandId: string | null; commandName: string }> {
    return { commandId: await this.#o.commands.id('up'), commandName: 'up' };
  }

  /** A failure: recorded on the server when admins can fix it, else tried again or given up. */
  #failed(guildId: string | undefined, failure: PostFailure): Promise<SendOutcome> {
    if (guildId === undefined) return Promise.resolve(failedPost(failure).outcome);
    const { settings, logger } = this.#o;
    return settleFailedPost(failure, { guildId, settings, logger, now: this.#now(), what: 'reminder' });
  }

  async #record(guildId: string, problem: GuildProblem): Promise<void> {
    await this.#o.settings.update(guildId, { problem }, this.#now()).catch((err: unknown) => {
      this.#o.logger.warn({ err, guildId, problem }, 'could not record a reminder problem');
    });
  }
}

/**
 * The /up use case with fakes of our own boundaries only (the handlers' deps): the command and the
 * recovery after a restart send the same up and tell its outcome and its failures the same way.
 */
import type { REST } from '@discordjs/rest';
import type { ChatInputCommandInteraction } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { up } from '../../commands/up.js';
import { ForbiddenError, type ServerUpdate, type ServerUpResult } from '../../src/directory/index.js';
import type { DiscordLookups } from '../../src/discord/lookups.js';
import { describeUpFailure } from '../../src/features/up/failure.js';
import { recoverPendingUps } from '../../src/features/up/recover.js';
import { translator } from '../../src/i18n/index.js';
import { describeFailure } from '../../src/interactions/error-message.js';
import type { BotDeps, CommandContext } from '../../src/interactions/types.js';
import { createLogger } from '../../src/log/logger.js';
import { type EmbedMessage, isLayout, type RenderedMessage } from '../../src/render/message.js';
import type { PendingUp } from '../../src/store/journal.js';
import type { GuildSettings } from '../../src/store/settings.js';
import { checkRequest } from '../discord/spec/conformance.js';
import { MemoryUpJournal } from '../support/memory-journal.js';
import { eventually } from '../support/wait.js';

const settle = () => eventually(async () => true, 1_000, 'a tick');

const NOW = 1_700_000_000_000;
const GUILD = '722424773233213460';
const t = translator('en-US');

function result(overrides: Partial<ServerUpResult> = {}): ServerUpResult {
  return {
    serverId: GUILD,
    up: 1,
    updated: true,
    bumps: 3,
    boost: false,
    upSuccessfully: true,
    nextUpAt: new Date(NOW + 4 * 3_600_000),
    timeToNextUpInMs: 4 * 3_600_000,
    message: 'Raised',
    ...overrides,
  };
}

/** Deps whose directory answers `answer` and records what it was sent and what the journal held then. */
function fakeDeps(answer: () => Promise<ServerUpResult>) {
  const journal = new MemoryUpJournal();
  const sent: Array<{ body: ServerUpdate; journaled: string[] }> = [];
  const discord: DiscordLookups = {
    guildStats: async () => ({ name: 'Guild', membersAll: 12 }),
    identity: async () => null,
    guildName: () => undefined,
    channelName: (id) => (id === '722424773233213461' ? 'general' : undefined),
    isPostable: () => false,
  };
  const scheduled: Array<{ guildId: string; dueAt: number }> = [];
  /** What the journal held when each reminder was written. */
  const journaledAtSchedule: string[][] = [];
  const woken: number[] = [];
  const settings: { current: Partial<GuildSettings> | undefined; fail: boolean } = {
    current: undefined,
    fail: false,
  };
  const deps = {
    settings: {
      get: async () => {
        if (settings.fail) throw new Error('store down');
        return settings.current;
      },
    },
    reminders: {
      scheduleGuild: async (guildId: string, times: { dueAt: number }) => {
        if (settings.fail) throw new Error('store down');
        scheduled.push({ guildId, dueAt: times.dueAt });
        journaledAtSchedule.push([...journal.entries.keys()]);
        return 'scheduled';
      },
      getGuild: async () => {
        if (settings.fail) throw new Error('store down');
        return undefined;
      },
    },
    wakeReminders: (at: number) => void woken.push(at),
    history: { record: async () => 'recorded', timed: async () => [] },
    commands: { learn: () => undefined },
    directory: {
      postServer: async (body: ServerUpdate) => {
        sent.push({ body, journaled: [...journal.entries.keys()] });
        return answer();
      },
    },
    discord,
    logger: createLogger({ level: 'silent' }),
    now: () => NOW,
    journal,
  } as unknown as BotDeps;
  return { deps, journal, sent, scheduled, woken, settings, journaledAtSchedule };
}

function context(deps: BotDeps) {
  const answers: Array<{ how: 'public' | 'private'; message: EmbedMessage }> = [];
  const interaction = {
    id: '900000000000000100',
    token: 'interaction-token',
    applicationId: '900000000000000001',
    guildId: GUILD,
    channelId: '722424773233213461',
    user: { id: '525366699969478676' },
    locale: 'en-US',
    guildLocale: 'en-US',
    commandId: '900000000000000002',
    createdTimestamp: NOW,
  } as unknown as ChatInputCommandInteraction;
  const ctx: CommandContext = {
    interaction,
    deps,
    t,
    locale: 'en-US',
    deadline: NOW + 60_000,
    reply: {
      // /up answers with embeds (the product's design); a layout here fails the test.
      public: async (message) => void answers.push({ how: 'public', message: embedsOnly(message) }),
      private: async (message) => void answers.push({ how: 'private', message: embedsOnly(message) }),
    },
  };
  return { ctx, answers };
}

function embedsOnly(message: RenderedMessage): EmbedMessage {
  if (isLayout(message)) throw new Error('/up answered with a V2 layout');
  return message;
}

function buttonIds(message: EmbedMessage): string[] {
  return message.components.flatMap((row) =>
    row.components.flatMap((c) => ('custom_id' in c ? [c.custom_id] : [])),
  );
}

describe('/up through its deps', () => {
  it('sets the server reminder at the next-up time and offers "Remind me", on a success and on "not yet"', async () => {
    for (const upSuccessfully of [true, false]) {
      const { deps, scheduled, woken } = fakeDeps(async () => result({ upSuccessfully }));
      const { ctx, answers } = context(deps);
      await up.execute(ctx);
      await settle();
      const next = NOW + 4 * 3_600_000;
      expect(scheduled).toEqual([{ guildId: GUILD, dueAt: next }]);
      expect(woken).toEqual([next]);
      expect(buttonIds(answers[0]!.message)).toEqual([`remind:${next / 1000}`]);
    }
  });

  it('writes the reminder before the journal lets go of the up (a kill in between loses neither)', async () => {
    const { deps, journal, journaledAtSchedule } = fakeDeps(async () => result());
    const { ctx, answers } = context(deps);
    await up.execute(ctx);
    // The reminder was written while the up was still journaled, and before the answer.
    expect(journaledAtSchedule).toEqual([['900000000000000100']]);
    expect(journal.entries.size).toBe(0);
    expect(answers).toHaveLength(1);
  });

  it('sets nothing for an answer without a usable next-up time (not updated, past, years away)', async () => {
    for (const overrides of [
      { updated: false, upSuccessfully: false },
      { nextUpAt: new Date(NOW - 1_000) },
      { nextUpAt: new Date(NOW + 400 * 24 * 3_600_000) },
      { nextUpAt: null },
    ]) {
      const { deps, scheduled } = fakeDeps(async () => result(overrides));
      const { ctx, answers } = context(deps);
      await up.execute(ctx);
      await settle();
      expect(scheduled).toEqual([]);
      expect(buttonIds(answers[0]!.message)).toEqual([]);
    }
  });

  it('answers even when the store is down: no reminder, no lost answer', async () => {
    const { deps, settings } = fakeDeps(async () => result());
    settings.fail = true;
    const { ctx, answers } = context(deps);
    expect(await up.execute(ctx)).toBe('success');
    await settle();
    expect(answers).toHaveLength(1);
  });

  it("words the public success in the server's language, and 'not yet' in the user's", async () => {
    const ok = fakeDeps(async () => result());
    ok.settings.current = { publicLanguage: 'ru' };
    const pub = context(ok.deps);
    await up.execute(pub.ctx);
    expect(pub.answers[0]!.message.embeds[0]?.title).toContain(translator('ru')('up.title.success'));

    const wait = fakeDeps(async () => result({ upSuccessfully: false }));
    wait.settings.current = { publicLanguage: 'ru' };
    const priv = context(wait.deps);
    await up.execute(priv.ctx);
    expect(priv.answers[0]!.message.embeds[0]?.title).toContain(t('up.title.cooldown'));
  });

  it('journals the up while it is sent, with the statistics from deps.discord, and shows a success', async () => {
    const { deps, journal, sent } = fakeDeps(async () => result());
    const { ctx, answers } = context(deps);
    expect(await up.execute(ctx)).toBe('success');
    expect(sent).toEqual([
      {
        body: {
          serverId: GUILD,
          up: true,
          botPresent: true,
          name: 'Guild',
          membersAll: 12,
          upUserId: '525366699969478676',
          upChannelId: '722424773233213461',
          upChannelName: 'general',
        },
        journaled: ['900000000000000100'],
      },
    ]);
    expect(journal.entries.size).toBe(0);
    expect(answers.map((a) => a.how)).toEqual(['public']);
  });

  it('tells "not yet" privately, and forgets the journal entry when the directory fails', async () => {
    const cooldown = fakeDeps(async () => result({ upSuccessfully: false }));
    const first = context(cooldown.deps);
    expect(await up.execute(first.ctx)).toBe('cooldown');
    expect(first.answers.map((a) => a.how)).toEqual(['private']);

    const failing = fakeDeps(async () => {
      throw new ForbiddenError('no');
    });
    await expect(up.execute(context(failing.deps).ctx)).rejects.toBeInstanceOf(ForbiddenError);
    expect(failing.journal.entries.size).toBe(0);
  });

  it("words its failures as /up's: a titled card, and a refusal about this server", () => {
    const mine = describeUpFailure(new ForbiddenError('no'), t, NOW);
    const generic = describeFailure(new ForbiddenError('no'), t, NOW, 'server');
    expect(up.describeFailure).toBe(describeUpFailure);
    expect(mine.described).toMatchObject({ code: 'Forbidden', level: 'warn', text: t('errors.forbidden') });
    expect(mine.message.embeds[0]).toMatchObject({
      title: `❌ ${t('up.title.error')}`,
      description: t('errors.forbidden'),
    });
    expect(generic.message.embeds[0]).toMatchObject({ description: `❌ ${t('errors.forbiddenGeneric')}` });
    expect(generic.message.embeds[0]?.title).toBeUndefined();
  });
});

describe('an up from before a restart', () => {
  const pending: PendingUp = {
    interactionId: '900000000000000200',
    token: 'old-token',
    applicationId: '900000000000000001',
    guildId: GUILD,
    channelId: '722424773233213461',
    channelName: 'general',
    userId: '525366699969478676',
    locale: 'en-US',
    guildLocale: 'en-US',
    createdAt: NOW - 60_000,
  };

  /** A REST of which the recovery uses patch, delete and post on the interaction's webhook. */
  function fakeRest() {
    const calls: Array<{ method: string; route: string; body?: unknown }> = [];
    const call = (method: string) => async (route: string, options?: { body?: unknown }) => {
      calls.push({ method, route, body: options?.body });
      return undefined;
    };
    const rest = { patch: call('patch'), delete: call('delete'), post: call('post') } as unknown as REST;
    /** What Discord's API description finds wrong with the bodies sent (an undeclared field). */
    const violations = () => calls.flatMap((c) => checkRequest(c.method, c.route, c.body));
    return { rest, calls, violations };
  }

  it('is sent again as the same up (without statistics) and answered on its webhook, with a note', async () => {
    const { deps, journal, sent } = fakeDeps(async () => result());
    await journal.add(pending);
    const { rest, calls } = fakeRest();
    const answered = await recoverPendingUps({ ...deps, rest, now: () => NOW });
    expect(answered).toBe(1);
    expect(sent.map((s) => s.body)).toEqual([
      {
        serverId: GUILD,
        up: true,
        botPresent: true,
        upUserId: pending.userId,
        upChannelId: pending.channelId,
        upChannelName: 'general',
      },
    ]);
    expect(calls.map((c) => `${c.method} ${c.route}`)).toEqual([
      `patch /webhooks/${pending.applicationId}/${pending.token}/messages/%40original`,
    ]);
    const body = calls[0]?.body as EmbedMessage & { allowed_mentions: unknown };
    expect(body.embeds[0]?.footer?.text).toBe(t('up.afterRestart'));
    // The API's own names: Discord drops a field it does not declare (`repliedUser`).
    expect(body.allowed_mentions).toEqual({ parse: [], replied_user: false });
    expect(journal.entries.size).toBe(0);
  });

  it("is the message the live /up sends, in the server's public language, the note aside", async () => {
    for (const [language, guildLocale, expected] of [
      ['auto', 'ru', 'ru'],
      ['ru', 'en-US', 'ru'],
      ['en-US', 'ru', 'en-US'],
    ] as const) {
      const live = fakeDeps(async () => result());
      live.settings.current = { publicLanguage: language };
      const { ctx, answers } = context(live.deps);
      (ctx.interaction as { guildLocale: string }).guildLocale = guildLocale;
      await up.execute(ctx);

      const after = fakeDeps(async () => result());
      after.settings.current = { publicLanguage: language };
      await after.journal.add({ ...pending, guildLocale });
      const { rest, calls, violations } = fakeRest();
      await recoverPendingUps({ ...after.deps, rest, now: () => NOW });
      expect(violations()).toEqual([]);
      const body = calls[0]?.body as EmbedMessage & { allowed_mentions: unknown; content: string };
      const tt = translator(expected);
      expect(answers[0]?.how).toBe('public');
      expect(answers[0]?.message.embeds[0]?.title).toContain(tt('up.title.success'));
      expect(body.embeds[0]?.footer?.text).toBe(tt('up.afterRestart'));
      const [first, ...others] = body.embeds;
      const { footer: _footer, ...withoutNote } = first ?? {};
      expect({ embeds: [withoutNote, ...others], components: body.components }).toEqual({
        embeds: answers[0]?.message.embeds,
        components: answers[0]?.message.components,
      });
    }
  });

  it("answers 'not yet' privately in the presser's language, with the Remind me button", async () => {
    const { deps } = fakeDeps(async () => result({ upSuccessfully: false }));
    deps.settings.get = async () => ({ publicLanguage: 'en-US' }) as GuildSettings;
    await deps.journal.add({ ...pending, locale: 'ru', guildLocale: 'en-US' });
    const { rest, calls, violations } = fakeRest();
    await recoverPendingUps({ ...deps, rest, now: () => NOW });
    expect(violations()).toEqual([]);
    expect(calls.map((c) => c.method)).toEqual(['delete', 'post']);
    const body = calls[1]?.body as EmbedMessage & { flags: number };
    expect(body.flags).toBe(64);
    expect(body.embeds[0]?.title).toContain(translator('ru')('up.title.cooldown'));
    expect(body.embeds[0]?.footer?.text).toBe(translator('ru')('up.afterRestart'));
    expect(buttonIds(body)).toEqual([`remind:${(NOW + 4 * 3_600_000) / 1000}`]);
  });

  it("tells a failure privately, worded as the command's", async () => {
    const { deps } = fakeDeps(async () => {
      throw new ForbiddenError('no');
    });
    await deps.journal.add(pending);
    const { rest, calls } = fakeRest();
    await recoverPendingUps({ ...deps, rest, now: () => NOW });
    expect(calls.map((c) => c.method)).toEqual(['delete', 'post']);
    const body = calls[1]?.body as EmbedMessage & { flags: number };
    expect(body.flags).toBe(64);
    expect(body.embeds[0]).toMatchObject({
      title: `❌ ${t('up.title.error')}`,
      description: t('errors.forbidden'),
      footer: { text: t('up.afterRestart') },
    });
  });
});

/**
 * The router tells a failing handler's error with the handler's own describeFailure when it has
 * one (whatever the command's name), and with the common vocabulary about its subject otherwise;
 * a database away for now is a localized "try again".
 */
import type { APIEmbed, ChatInputCommandInteraction, Interaction } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/directory/index.js';
import { translator } from '../../src/i18n/index.js';
import { createRouter } from '../../src/interactions/router.js';
import type { BotDeps, SlashCommand } from '../../src/interactions/types.js';
import { createLogger } from '../../src/log/logger.js';
import { StoreUnavailableError } from '../../src/store/errors.js';

/** Every command of these registries answers in the channel (none is stated private). */
const ANSWERED_PUBLICLY = { commands: {}, userCommands: {} };

const t = translator('en-US');

function command(
  name: string,
  wording: Pick<SlashCommand, 'subject' | 'describeFailure'>,
  failure: () => Error = () => new NotFoundError('gone'),
): SlashCommand {
  return {
    data: { name, description: name },
    ...wording,
    execute: async () => {
      throw failure();
    },
  };
}

/** A chat-input interaction as far as the router goes; records the follow-up the user sees. */
function interaction(commandName: string, locale = 'en-US') {
  const seen: Array<{ flags?: number; embeds?: APIEmbed[] }> = [];
  const fake = {
    id: '900000000000000100',
    commandName,
    locale,
    guildId: '722424773233213460',
    user: { id: '525366699969478676' },
    createdTimestamp: Date.now(),
    isChatInputCommand: () => true,
    isUserContextMenuCommand: () => false,
    isAutocomplete: () => false,
    isButton: () => false,
    isModalSubmit: () => false,
    inGuild: () => true,
    deferReply: async () => undefined,
    editReply: async () => undefined,
    deleteReply: async () => undefined,
    followUp: async (message: (typeof seen)[number]) => void seen.push(message),
  };
  return { interaction: fake as unknown as ChatInputCommandInteraction & Interaction, seen };
}

describe('failure wording', () => {
  const deps = { logger: createLogger({ level: 'silent' }), now: Date.now } as unknown as BotDeps;
  const custom = {
    described: { text: 'custom', level: 'info' as const, code: 'Custom' },
    message: { embeds: [{ title: 'Custom title', description: 'custom' }], components: [] },
  };
  const outcomes: string[] = [];
  const router = createRouter(
    {
      commands: [
        command('anything', { describeFailure: () => custom }),
        command('bot', { subject: 'bot' }),
        command(
          'remember',
          {},
          () => new StoreUnavailableError('The database is unavailable: connect ECONNREFUSED'),
        ),
      ],
      buttons: [],
      deferrals: ANSWERED_PUBLICLY,
    },
    deps,
    { onHandled: (event) => outcomes.push(`${event.name}:${event.outcome}`) },
  );

  it("uses the command's own describeFailure, whatever its name", async () => {
    const { interaction: i, seen } = interaction('anything');
    await router.handle(i);
    expect(seen).toEqual([expect.objectContaining({ embeds: custom.message.embeds, flags: 64 })]);
    expect(outcomes.at(-1)).toBe('anything:error:Custom');
  });

  it('otherwise the common wording about the command’s subject', async () => {
    const { interaction: i, seen } = interaction('bot');
    await router.handle(i);
    expect(seen[0]?.embeds?.[0]).toMatchObject({ description: `❌ ${t('errors.notFound.bot')}` });
    expect(outcomes.at(-1)).toBe('bot:error:NotFound');
  });

  it.each(['en-US', 'ru'])(
    'a database away for now: a private, localized "try again" (%s)',
    async (locale) => {
      const { interaction: i, seen } = interaction('remember', locale);
      await router.handle(i);
      const tryAgain = translator(locale)('errors.storeUnavailable');
      expect(seen).toEqual([expect.objectContaining({ flags: 64 })]);
      expect(seen[0]?.embeds?.[0]).toMatchObject({ description: `❌ ${tryAgain}` });
      expect(outcomes.at(-1)).toBe('remember:error:StoreUnavailable');
    },
  );
});

describe('drain', () => {
  it('waits for the interactions in flight, at most as long as asked', async () => {
    const deps = { logger: createLogger({ level: 'silent' }), now: Date.now } as unknown as BotDeps;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: SlashCommand = {
      data: { name: 'slow', description: 'slow' },
      execute: async () => {
        await held;
        return 'done';
      },
    };
    const router = createRouter({ commands: [slow], buttons: [], deferrals: ANSWERED_PUBLICLY }, deps);
    expect(await router.drain(1_000)).toBe(true);
    const handled = router.handle(interaction('slow').interaction);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(router.inFlight).toBe(1);
    const started = Date.now();
    expect(await router.drain(30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const draining = router.drain(5_000);
    release();
    expect(await draining).toBe(true);
    await handled;
    expect(router.inFlight).toBe(0);
  });
});

describe('autocomplete', () => {
  /** An autocomplete interaction as far as the router goes; records what it answered. */
  function typing(commandName: string, respond: (choices: unknown[]) => Promise<void>) {
    return {
      id: '900000000000000200',
      commandName,
      locale: 'en-US',
      guildId: '722424773233213460',
      user: { id: '525366699969478676' },
      isAutocomplete: () => true,
      respond,
    } as unknown as Interaction;
  }
  const choices = [{ name: 'Kerdoku (kerdoku)', value: 'kerdoku' }];

  it("answers with the command's choices, and with none when it has none, fails or is unknown", async () => {
    const warned: unknown[] = [];
    const logger = createLogger({ level: 'silent' });
    const deps = {
      logger: { ...logger, warn: (fields: unknown) => warned.push(fields), debug: () => undefined },
      now: Date.now,
    } as unknown as BotDeps;
    const events: string[] = [];
    const router = createRouter(
      {
        commands: [
          { ...command('bot', {}), autocomplete: () => choices },
          {
            ...command('server', {}),
            autocomplete: () => {
              throw new Error('broken memory');
            },
          },
          command('up', {}),
        ],
        buttons: [],
        deferrals: ANSWERED_PUBLICLY,
      },
      deps,
      { onHandled: (e) => events.push(`${e.kind}:${e.name}:${e.outcome}`) },
    );
    const answered: unknown[][] = [];
    const respond = async (c: unknown[]) => void answered.push(c);
    for (const name of ['bot', 'server', 'up', 'nope']) await router.handle(typing(name, respond));
    expect(answered).toEqual([choices, [], [], []]);
    expect(events).toEqual([
      'autocomplete:bot:suggested',
      'autocomplete:server:failed',
      'autocomplete:up:none',
      'autocomplete:unknown:none',
    ]);
    expect(warned).toHaveLength(1);
  });

  it('an answer Discord refuses (the 3 s are over) ends in a debug line, not a rejection', async () => {
    const deps = { logger: createLogger({ level: 'silent' }), now: Date.now } as unknown as BotDeps;
    const events: string[] = [];
    const router = createRouter(
      {
        commands: [{ ...command('bot', {}), autocomplete: () => choices }],
        buttons: [],
        deferrals: ANSWERED_PUBLICLY,
      },
      deps,
      { onHandled: (e) => events.push(e.outcome) },
    );
    await expect(
      router.handle(typing('bot', () => Promise.reject(new Error('Unknown interaction')))),
    ).resolves.toBeUndefined();
    expect(events).toEqual(['unanswered']);
  });

  it('answers nothing once the bot is stopping', async () => {
    const deps = { logger: createLogger({ level: 'silent' }), now: Date.now } as unknown as BotDeps;
    const router = createRouter(
      {
        commands: [{ ...command('bot', {}), autocomplete: () => choices }],
        buttons: [],
        deferrals: ANSWERED_PUBLICLY,
      },
      deps,
    );
    router.close();
    const answered: unknown[][] = [];
    await router.handle(typing('bot', async (c) => void answered.push(c)));
    expect(answered).toEqual([[]]);
  });
});

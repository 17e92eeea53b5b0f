/**
 * The Discord stand-in in a process of its own (scenario 2), driven over IPC by bench/lib/bot.ts:
 * it dispatches /up interactions when told and keeps their handles, so the time from dispatch to
 * the deferral and to the final answer is taken on its own clock, as in-process.
 */
import {
  DISCORD_GLOBAL_LIMIT,
  type DiscordStandIn,
  type GuildFixture,
  type InteractionHandle,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type CallbackRelay, startCallbackRelay } from '../../test/discord/relay.js';
import { serveRpc } from '../lib/ipc.js';
import { type UpTimings, upTimings } from '../lib/records.js';

export interface StandInStarted {
  restUrl: string;
  token: string;
}

/**
 * One keystroke of a user typing /bot's `ref` (an autocomplete interaction); `key` names it for
 * `timings`, the user stays the same from one keystroke to the next.
 */
export interface Keystroke {
  key: string;
  guildId: string;
  userId: string;
  text: string;
}

/** One /up to dispatch; `userId` names it (a user of its own, as the bench sends them). */
export interface UpCommand {
  guildId: string;
  userId: string;
  /** Another command than /up: /bot with its `ref` (scenario 11's look-ups before the typing). */
  bot?: string;
}

let standIn: DiscordStandIn | undefined;
let relay: CallbackRelay | undefined;
const handles = new Map<string, InteractionHandle>();

function running(): DiscordStandIn {
  if (!standIn) throw new Error('the stand-in is not started');
  return standIn;
}

serveRpc({
  async start(guilds: GuildFixture[]): Promise<StandInStarted> {
    // Discord's global limit on, as Discord has it: a 429 the bot provokes is counted (tooMany).
    standIn = await startDiscordStandIn({ guilds, globalRateLimit: DISCORD_GLOBAL_LIMIT });
    // The bot's REST goes through the relay: the deferrals are timed as they reach it.
    relay = await startCallbackRelay(standIn.restUrl);
    return { restUrl: relay.url, token: standIn.token };
  },
  /**
   * All in one go, as the bench's calls of one turn arrive together: the burst stays a burst,
   * every payload made before the first is dispatched (sendCommands).
   */
  send(commands: UpCommand[]): void {
    const sent = running().sendCommands(
      commands.map(({ guildId, userId, bot }) => ({
        guildId,
        user: { id: userId, username: `bench_${userId}` },
        ...(bot === undefined
          ? { name: 'up' }
          : { name: 'bot', options: [{ type: 3, name: 'ref', value: bot } as never] }),
      })),
    );
    commands.forEach(({ userId }, i) => {
      const handle = sent[i];
      if (handle) handles.set(userId, handle);
    });
  },
  /**
   * Keystrokes, all in one go (a burst of users typing at once); resolves once each has its
   * answer (or has waited 10 s), so that the next keystroke of a user follows the answer to the
   * one before, as a client sends them.
   */
  async type(keystrokes: Keystroke[]): Promise<void> {
    const sent = running().sendCommands(
      keystrokes.map(({ guildId, userId, text }) => ({
        guildId,
        name: 'bot',
        user: { id: userId, username: `typist_${userId}` },
        autocomplete: true,
        options: [{ type: 3, name: 'ref', value: text, focused: true } as never],
      })),
    );
    keystrokes.forEach(({ key }, i) => {
      const handle = sent[i];
      if (handle) handles.set(key, handle);
    });
    await Promise.all(sent.map((handle) => handle.firstResponse(10_000).catch(() => undefined)));
  },
  /**
   * Once the bot has answered: the times of these interactions. Then the stand-in lets go of them
   * (records, messages, requests), so that its heap stays that of a short run over every pass.
   */
  async timings(userIds: string[]): Promise<UpTimings[]> {
    const found = userIds.map((userId) => {
      const handle = handles.get(userId);
      if (!handle) throw new Error(`no interaction from user ${userId}`);
      handles.delete(userId);
      return handle;
    });
    const ids = found.map((handle) => handle.id);
    const relayed = (await relay?.callbacks(ids)) ?? {};
    const times = found.map((handle) => upTimings(handle, relayed[handle.id]));
    running().forget(ids);
    return times;
  },
  restConnections(): number {
    return running().restConnections();
  },
  /** Global 429s answered so far (interaction callbacks and webhooks are not counted, as on Discord). */
  tooMany(): number {
    return running().globalRateLimited();
  },
  async close(): Promise<void> {
    await relay?.close();
    relay = undefined;
    await standIn?.close();
    standIn = undefined;
  },
});

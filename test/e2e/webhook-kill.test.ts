/**
 * A webhook event is announced once across `kill -9`, on SQLite and on PostgreSQL. The built bot
 * answers the directory 200 once the event is stored, then posts; it is killed while Discord
 * holds that post. Either Discord had the post (it creates the message although nobody reads the
 * answer) or it had not (the post is lost with the process): a new process takes the claim over
 * after its lease and posts again with the same nonce, and the channel ends with one message.
 */
import { describe, expect, it, type onTestFinished } from 'vitest';
import { WebhookRepository } from '../../src/store/index.js';
import { freshGuild, type World } from '../faults/fixtures.js';
import { ENGINES } from '../store/places.js';
import type { BotProcess } from '../support/bot-process.js';
import { freePort } from '../support/local.js';
import { eventually, withTimeout } from '../support/wait.js';
import { killScope } from './kill-scope.js';

const KEY = 'kill-test-key-4b8c1d';
const AUTHOR = '310000000000000007';

describe.each(ENGINES)('a webhook event across kill -9 (%s)', (engine) => {
  function scope(finished: typeof onTestFinished) {
    const kill = killScope(engine, finished);
    return {
      async setUp() {
        const { world, store } = await kill.open();
        const channelId = freshGuild.channels[0]!.id;
        const webhooks = new WebhookRepository(store);
        await webhooks.configure(freshGuild.id, KEY, channelId, Date.now());
        /** The one event's state, as the store has it. */
        const state = async () =>
          (await store.run((db) => db.selectFrom('webhook_events').select('state').execute()))[0]?.state;
        return { world, channelId, state };
      },
      async start(name: string, w: World): Promise<{ proc: BotProcess; port: number }> {
        const port = await freePort();
        const proc = kill.start(name, w, { WEBHOOK_PORT: String(port), WEBHOOK_HOST: '127.0.0.1' });
        await proc.ready();
        return { proc, port };
      },
    };
  }

  for (const discordHad of [true, false]) {
    it.concurrent(`killed while Discord holds the announcement (${discordHad ? 'which it then creates' : 'which is lost'}): one message in the end`, async ({
      onTestFinished,
    }) => {
      const { setUp, start } = scope(onTestFinished);
      const { world: w, channelId, state } = await setUp();
      w.discord.holdPosts(channelId);
      const first = await start(discordHad ? 'hook-had-1' : 'hook-lost-1', w);
      w.emu.webhooks.set(freshGuild.id, {
        url: `http://127.0.0.1:${first.port}/hooks/directory/${freshGuild.id}`,
        key: KEY,
      });
      // Answered once stored: the announcement comes after.
      expect(await w.emu.webhooks.comment(freshGuild.id, 'new', { user: AUTHOR, new: 'Great server' })).toBe(
        200,
      );
      const held = await w.discord.waitForHeldPost(channelId, 10_000);
      first.proc.kill('SIGKILL');
      await withTimeout(first.proc.exited, 5_000, 'the first bot to die');
      if (discordHad) await held.complete();
      else await held.drop();
      await w.discord.releasePosts(channelId);
      expect(w.discord.channelMessages(channelId)).toHaveLength(discordHad ? 1 : 0);
      expect(await state()).toBe('claimed');

      await start(discordHad ? 'hook-had-2' : 'hook-lost-2', w);
      await eventually(
        async () => ((await state()) === 'done' ? true : undefined),
        15_000,
        'the second process to record the announcement',
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const messages = w.discord.channelMessages(channelId);
      expect(messages).toHaveLength(1);
      // Taken over with the same nonce: Discord answered the first message back, or created it now.
      expect(messages[0]?.repeats).toBe(discordHad ? 1 : 0);
      expect(messages[0]?.pings).toEqual({ everyone: false, users: [], roles: [] });
    }, 120_000);
  }
});

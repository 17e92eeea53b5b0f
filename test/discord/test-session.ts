/**
 * The stand-in's own tests: a stand-in and a discord.js client connected to it, each closed after
 * the test (vitest's afterEach, registered by the call).
 */
import { once } from 'node:events';
import { Client, type ClientOptions, Events, GatewayIntentBits } from 'discord.js';
import { afterEach } from 'vitest';
import { type DiscordStandIn, type StandInOptions, startDiscordStandIn } from './index.js';

export interface StandInSession {
  start(options?: StandInOptions): Promise<DiscordStandIn>;
  /** A client for the stand-in (Guilds intent), not yet logged in. */
  client(si: DiscordStandIn, extra?: Partial<ClientOptions>): Client;
  /** A client logged in and ready. */
  connect(si: DiscordStandIn, extra?: Partial<ClientOptions>): Promise<Client>;
  /** The test closed the stand-in itself. */
  closed(): void;
}

export function standInSession(): StandInSession {
  let standIn: DiscordStandIn | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.destroy();
    client = undefined;
    await standIn?.close();
    standIn = undefined;
  });
  const session: StandInSession = {
    async start(options = {}) {
      standIn = await startDiscordStandIn(options);
      return standIn;
    },
    client(si, extra = {}) {
      client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: si.restUrl }, ...extra });
      return client;
    },
    async connect(si, extra = {}) {
      const c = session.client(si, extra);
      const isReady = once(c, Events.ClientReady);
      await c.login(si.token);
      await isReady;
      return c;
    },
    closed() {
      standIn = undefined;
    },
  };
  return session;
}

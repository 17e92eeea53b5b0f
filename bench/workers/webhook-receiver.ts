/**
 * Scenario 9's receiver, in a process of its own as in production (the load comes from the bench
 * process): the bot's webhook receiver (features/webhooks/receiver.ts) over the bot's store, with
 * the servers' webhooks set up (their keys loaded in memory at the start, as in production). Two
 * listeners: one with a limit out of the way (throughput), one with the default limit (a flood).
 */
import { startWebhookReceiver, type WebhookReceiver } from '../../src/features/webhooks/receiver.js';
import { createLogger } from '../../src/log/logger.js';
import { openStore, type Store, type StoreOptions, WebhookRepository } from '../../src/store/index.js';
import { serveRpc } from '../lib/ipc.js';

let store: Store | undefined;
const receivers: WebhookReceiver[] = [];

serveRpc({
  async start(
    options: StoreOptions,
    guilds: string[],
    key: string,
  ): Promise<{ open: number; limited: number }> {
    store = await openStore(options);
    const webhooks = new WebhookRepository(store);
    for (const guildId of guilds) await webhooks.configure(guildId, key, '1', Date.now());
    const logger = createLogger({ level: 'silent' });
    const listen = (rateLimit: { max: number; windowMs: number }) =>
      startWebhookReceiver({ port: 0, host: '127.0.0.1', webhooks, logger, rateLimit });
    const open = await listen({ max: 1_000_000, windowMs: 1_000 });
    const limited = await listen({ max: 30, windowMs: 10_000 });
    receivers.push(open, limited);
    return { open: open.port, limited: limited.port };
  },
  cpuMs(): number {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  },
  async stored(): Promise<number> {
    if (!store) return 0;
    const rows = await store.run((db) => db.selectFrom('webhook_events').select('id').execute());
    return rows.length;
  },
  async stop(): Promise<void> {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await store?.close();
  },
});

/**
 * One process of test/ops/notify-hosts.test.ts: the built NotificationsService (dist/, `npm run
 * build` first) with the real intake over WebhookRepository and the real key lease, on the store
 * the environment names, as src/app/services.ts wires it, with a short lease. It logs (pino, on
 * stdout) every state of its connection ('notify state') and what the intake did with each
 * event ('notification taken'): the test learns from them which process holds the key.
 *
 * Environment: NOTIFY_URL, NOTIFY_KEY, STORE_OPTIONS (JSON of openStore's options), HOST_ID,
 * LEASE_MS, RENEW_EVERY_MS. Plain JavaScript so that it runs from the build as it is (the build
 * compiles no test/ops file).
 */
import { leaseHolder, NotificationsService } from '../../dist/src/features/notifications/connection.js';
import { notificationIntake } from '../../dist/src/features/notifications/intake.js';
import { keyLease } from '../../dist/src/features/notifications/lease.js';
import { createLogger } from '../../dist/src/log/logger.js';
import { openStore, WebhookRepository } from '../../dist/src/store/index.js';

const need = (name) => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};

const key = need('NOTIFY_KEY');
const logger = createLogger({
  level: 'info',
  secrets: [key],
  base: { pid: process.pid, host: need('HOST_ID') },
});
const store = await openStore(JSON.parse(need('STORE_OPTIONS')));
const now = Date.now;
const service = new NotificationsService({
  url: need('NOTIFY_URL'),
  key,
  intake: notificationIntake({
    webhooks: new WebhookRepository(store),
    botId: undefined,
    now,
    onStored: () => undefined,
    onOutcome: (type, via, outcome) => logger.info({ type, via, outcome }, 'notification taken'),
  }),
  lease: keyLease(store, key, leaseHolder(need('HOST_ID')), now),
  logger,
  now,
  leaseMs: Number(need('LEASE_MS')),
  renewEveryMs: Number(need('RENEW_EVERY_MS')),
  onState: (state) => logger.info({ state }, 'notify state'),
});
service.start();
logger.info('notify holder started');

process.once('SIGTERM', () => {
  void service
    .stop()
    .then(() => store.close())
    .finally(() => process.exit(0));
});

/**
 * One Discord client in a process of its own: logs in to the stand-in the parent runs, waits for
 * ready, and reports the time to ready and (after two forced GCs) process.memoryUsage() over IPC.
 * Ours holds the bot's store open meanwhile (SQLite in a fresh data directory), as the bot does
 * from its start: its memory is part of what is measured.
 * Started by bench/lib/children.ts with --expose-gc and the request in BENCH_WORKER.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { createDiscordClient } from '../../src/gateway/client.js';
import { openStore } from '../../src/store/index.js';
import type { WorkerRequest, WorkerResult } from '../lib/children.js';

function parseRequest(): WorkerRequest {
  const raw = process.env.BENCH_WORKER;
  if (!raw) throw new Error('BENCH_WORKER is not set');
  return JSON.parse(raw) as WorkerRequest;
}

/** The client, and for ours the number of guilds ChannelNames knows (it is part of what is measured). */
function makeClient(request: WorkerRequest): { client: Client; keptGuilds?: () => number } {
  if (request.config === 'ours') {
    const { client, channels } = createDiscordClient({ apiUrl: request.restUrl, shards: request.shards });
    return { client, keptGuilds: () => channels.guildCount };
  }
  // discord.js as it comes: every cache at its default, only the address and shard count set.
  return {
    client: new Client({
      intents: [GatewayIntentBits.Guilds],
      shardCount: request.shards,
      rest: { api: request.restUrl },
    }),
  };
}

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function send(message: unknown): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) {
      resolve();
      return;
    }
    process.send(message, () => resolve());
  });
}

/** Opens the store as the bot does; returns what closes and removes it. */
async function openBotStore(): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'directory-bot-bench-worker-'));
  try {
    const store = await openStore({ dataDir });
    return async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function main(): Promise<void> {
  const request = parseRequest();
  const removeStore = request.config === 'ours' ? await openBotStore() : undefined;
  try {
    await measure(request);
  } finally {
    await removeStore?.();
  }
}

async function measure(request: WorkerRequest): Promise<void> {
  const { client, keptGuilds } = makeClient(request);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  const started = performance.now();
  await client.login(request.token);
  await ready;
  const readyMs = performance.now() - started;
  const guilds = client.guilds.cache.size;
  if (guilds !== request.expectedGuilds) {
    throw new Error(`ready with ${guilds} guilds, expected ${request.expectedGuilds}`);
  }
  // Ours keeps each guild's report channel beside discord.js: it must hold every guild too.
  const kept = keptGuilds?.();
  if (kept !== undefined && kept !== request.expectedGuilds) {
    throw new Error(`ready with the channels of ${kept} guilds kept, expected ${request.expectedGuilds}`);
  }
  if (request.memory) await settle();
  const usage = process.memoryUsage();
  const result: WorkerResult = {
    readyMs,
    guilds,
    channels: client.channels.cache.size,
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
  };
  await send({ ok: true, result });
  await client.destroy();
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    await send({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  },
);

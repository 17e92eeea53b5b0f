#!/usr/bin/env node
/**
 * `npm start`: the bot in one process with internal shards, or (when spawned by
 * `npm run start:sharded`) one shard process of several (run.ts).
 *
 * The gateway's thread starts first, before the bot's modules load (about a second, discord.js
 * half of it): the thread loads its own on the other core meanwhile, so that a restart's shards
 * resume that much sooner (gateway-thread-start.ts, bench scenario 12). Nothing else happens
 * before the bot is loaded: a process that exits on its configuration takes the idle thread with
 * it.
 */
import { prestartGatewayThread } from '../discord/gateway-thread-start.js';

const gatewayThread = prestartGatewayThread();
const { runBot } = await import('./run.js');
await runBot(gatewayThread);

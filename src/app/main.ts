#!/usr/bin/env node
/**
 * `npm start`: the bot in one process with internal shards, or (when spawned by
 * `npm run start:sharded`) one shard process of several.
 *
 * The gateway's thread starts first, before anything else is loaded: its modules (@discordjs/ws,
 * undici) load on the other core while this one loads the bot's, and a restart's saved sessions
 * are resumed on it as soon as they are read (early-resume.ts). Everything else is run.ts.
 */
import { prestartGatewayThread } from '../discord/gateway-thread-start.js';

const gatewayThread = prestartGatewayThread();
const { runBot } = await import('./run.js');
await runBot(gatewayThread);

#!/usr/bin/env node
/**
 * `npm start`: the bot in one process with internal shards, or (when spawned by
 * `npm run start:sharded`) one shard process of several.
 *
 * The configuration is read first: a process that cannot start (no token, a variable that does
 * not parse) says so in one line and exits before anything else is loaded or started. Then the
 * gateway's thread starts, before the bot's modules load: its own (@discordjs/ws, undici) load on
 * the other core meanwhile, and a restart's saved sessions are resumed on it as soon as they are
 * read (early-resume.ts). Everything else is run.ts.
 */
import { prestartGatewayThread } from '../gateway/gateway-thread-start.js';
import { loadOrExit } from './startup.js';

const config = loadOrExit(['discordToken']);
const gatewayThread = prestartGatewayThread();
const { runBot } = await import('./run.js');
await runBot(config, gatewayThread);

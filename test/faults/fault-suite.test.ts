/**
 * The fault suite: one table, one row per fault, each with the behaviour expected of the bot.
 * Directory faults, a hostile directory, Discord faults, store faults and the webhook receiver's
 * abuse are seen through the real bot (in-process harness, or the built bot as a child process
 * where the fault is the process itself: a fatal gateway close, a kill during /up, a store it
 * cannot open). The runner (runner.ts)
 * prints the summary `fault suite: N rows, M as expected` and the table once every row has run.
 *
 * Every row also checks that no token (the Discord token, the directory tokens) shows up in a log
 * line, a child's output or a body sent to Discord, and that nothing the bot sent can ping.
 *
 * A family of rows is a module of families/ exporting a Family; listing it here adds its rows to
 * the table, in this order.
 */
import { webhookAbuse } from './families/abuse.js';
import { directoryFaults } from './families/directory.js';
import { directoryV3Faults } from './families/directory-v3.js';
import { hostileInput } from './families/fuzz.js';
import { gatewayCloses } from './families/gateway.js';
import { hostileDirectory } from './families/hostile.js';
import { notificationFaults } from './families/notifications.js';
import { processFaults, processFaultsOnPostgres } from './families/process.js';
import { storeFaults } from './families/store.js';
import { tokenLeaks } from './families/tokens.js';
import { webhookFaults } from './families/webhook.js';
import { runFaultSuite } from './runner.js';

runFaultSuite([
  directoryFaults,
  directoryV3Faults,
  webhookFaults,
  gatewayCloses,
  processFaults,
  processFaultsOnPostgres,
  storeFaults,
  webhookAbuse,
  hostileDirectory,
  notificationFaults,
  hostileInput,
  tokenLeaks,
]);

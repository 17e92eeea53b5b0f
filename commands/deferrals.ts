/**
 * Each command's first response, as the gateway's thread sends it (src/gateway/deferral-rules.ts):
 * a command named here is deferred from its packet, privately when `true`. The registry says the
 * same of itself (a command's `ephemeral`; every user command is private), and a test holds the
 * two equal (test/unit/deferral-rules.test.ts). Kept apart from the commands because it is read
 * before they load: a restart's shards resume, and defer the commands Discord replays, while the
 * bot's modules still load (src/app/early-resume.ts).
 */
import type { DeferralRules } from '../src/gateway/deferral-rules.js';

export const DEFERRAL_RULES: DeferralRules = {
  commands: { up: false, bot: false, server: false, profile: false, settings: true, leaderboard: false },
  userCommands: { 'Directory card': true },
};

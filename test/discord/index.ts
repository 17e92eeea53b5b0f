export { FOLLOW_UP_PATH, isFinalAnswer, ORIGINAL_PATH } from './answers.js';
export { pingsOf } from './channel-messages.js';
export * from './fixtures.js';
export { GatewayClose, GatewayOp } from './gateway.js';
export { DISCORD_GLOBAL_LIMIT } from './global-limit.js';
export { CallbackType, MessageFlag } from './interactions.js';
export {
  basePermissions,
  channelPermissions,
  makeOverwrite,
  type OverwriteFixture,
  type OverwriteInput,
  permissionString,
} from './permissions.js';
export { startDiscordStandIn } from './stand-in.js';
export type * from './types.js';

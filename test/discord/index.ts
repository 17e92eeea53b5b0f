export * from './fixtures.js';
export { GatewayClose, GatewayOp } from './gateway.js';
export { CallbackType, MessageFlag } from './interactions.js';
export { startDiscordStandIn } from './stand-in.js';
export type * from './types.js';

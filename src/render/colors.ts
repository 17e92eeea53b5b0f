export const COLORS = {
  info: 0x5865f2,
  success: 0x2ecc71,
  cooldown: 0xf1c40f,
  warning: 0xe67e22,
  error: 0xe74c3c,
} as const;

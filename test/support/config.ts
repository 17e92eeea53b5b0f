/** The configuration's verdict on an environment, as its problems (none when it loads). */
import { ConfigError, type Environment, loadConfig } from '../../src/config/env.js';

export function problemsOf(env: Environment): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

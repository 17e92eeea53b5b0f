/**
 * The container's health probe, apart from the script that runs it so tests can call it:
 * one GET of /healthz on the loopback interface, with a deadline, answered as an exit code.
 */
import { request } from 'node:http';
import { ConfigError, type Environment, loadConfig } from '../config/env.js';

export const HEALTHCHECK_TIMEOUT_MS = 3_000;

export type PortCheck = { ok: true; port: number } | { ok: false; problem: string };

/** The variable naming the port to probe: the bot's operations endpoint, or the REST proxy's. */
export type PortVariable = 'HTTP_PORT' | 'DISCORD_REST_PROXY_PORT';

/**
 * HTTP_PORT (or the REST proxy's port) by the configuration's own rule (an empty value is unset),
 * so that the probe knocks where the bot, or the proxy, listens.
 */
export function parsePort(value: string | undefined, name: PortVariable = 'HTTP_PORT'): PortCheck {
  let port: number | undefined;
  try {
    const config = loadConfig({ [name]: value });
    port = name === 'HTTP_PORT' ? config.httpPort : config.restProxy.port;
  } catch (err) {
    return { ok: false, problem: err instanceof ConfigError ? err.problems.join('; ') : String(err) };
  }
  if (port === undefined) return { ok: false, problem: `${name} is not set` };
  if (port === 0) return { ok: false, problem: `${name} is 0 (any free port): there is no port to probe` };
  return { ok: true, port };
}

export type ProbeResult = { ok: true; status: number } | { ok: false; status?: number; error: string };

export interface ProbeOptions {
  port: number;
  host?: string;
  path?: string;
  timeoutMs?: number;
}

/** GET http://host:port/path; ok on 200 within the timeout. Never rejects. */
export function probe(options: ProbeOptions): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? HEALTHCHECK_TIMEOUT_MS;
  return new Promise<ProbeResult>((resolve) => {
    let settled = false;
    const finish = (result: ProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = request({
      host: options.host ?? '127.0.0.1',
      port: options.port,
      path: options.path ?? '/healthz',
      method: 'GET',
      // No pooled socket: the script must end as soon as the answer is in.
      agent: false,
      headers: { Connection: 'close' },
    });
    // The deadline covers everything: connect, headers and body.
    const timer = setTimeout(() => {
      finish({ ok: false, error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      res.on('error', () => undefined);
      res.on('end', () => {
        finish(status === 200 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish({ ok: false, error: err.code ?? err.message });
    });
    req.end();
  });
}

export interface HealthcheckIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * Reads the port (HTTP_PORT unless `options.portVariable` says otherwise) from the environment
 * given, probes /healthz, returns the exit code.
 */
export async function runHealthcheck(
  env: Environment,
  io: HealthcheckIo,
  options: Omit<ProbeOptions, 'port'> & { portVariable?: PortVariable } = {},
): Promise<0 | 1> {
  const { portVariable = 'HTTP_PORT', ...probeOptions } = options;
  const port = parsePort(env[portVariable], portVariable);
  if (!port.ok) {
    io.err(`healthcheck: ${port.problem}`);
    return 1;
  }
  const result = await probe({ ...probeOptions, port: port.port });
  if (result.ok) {
    io.out(`healthcheck: ok (HTTP ${result.status})`);
    return 0;
  }
  io.err(`healthcheck: unhealthy: ${result.error}`);
  return 1;
}

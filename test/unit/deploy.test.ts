/**
 * deploy/: the Compose and Kubernetes examples, checked without Docker. Each host's environment is
 * built the way its container would see it (the manifest's variables over the image's ENV lines,
 * then the image's .env.defaults through readEnvironment, as the bot reads them) and loaded with the
 * real loadConfig. The hosts' shards must cover 0..SHARD_COUNT-1 exactly once, and what runs must be
 * what the Dockerfile runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parseDocument } from 'yaml';
import { SHUTDOWN_HARD_LIMIT_MS } from '../../src/app/shutdown.js';
import {
  type Config,
  ConfigError,
  DEFAULTS_FILE,
  type Environment,
  loadConfig,
  parseDuration,
  readEnvironment,
  SECRET_VARIABLES,
} from '../../src/config/env.js';
import { parsePort } from '../../src/ops/health-probe.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const COMPOSE_FILE = 'deploy/compose.yaml';
const STATEFULSET_FILE = 'deploy/kubernetes/statefulset.yaml';
const REST_PROXY_FILE = 'deploy/kubernetes/rest-proxy.yaml';

/** Stand-ins for the secrets the files leave to the operator, shaped to pass the bot's validation. */
const SAMPLE_DISCORD_TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.sample.discord-token-for-the-deploy-test';
const SAMPLE_DIRECTORY_TOKEN = 'sample-directory-token-for-the-deploy-test';
const SAMPLE_DATABASE_URL = 'postgres://bot:pw@postgres:5432/bot';
/** What `docker compose` would find in the shell or deploy/.env. */
const COMPOSE_VARIABLES: Environment = {
  DISCORD_TOKEN: SAMPLE_DISCORD_TOKEN,
  DIRECTORY_TOKEN: SAMPLE_DIRECTORY_TOKEN,
  POSTGRES_PASSWORD: 'pw',
};
/** What the Kubernetes Secret would hold, by the variable it feeds. */
const SECRET_VALUES: Environment = {
  DISCORD_TOKEN: SAMPLE_DISCORD_TOKEN,
  DIRECTORY_TOKEN: SAMPLE_DIRECTORY_TOKEN,
  DATABASE_URL: SAMPLE_DATABASE_URL,
};
/** Secrets the files must take from elsewhere: the bot's own, and the database's password. */
const SECRET_NAMES = new Set([...SECRET_VARIABLES, 'POSTGRES_PASSWORD']);

type Mapping = Record<string, unknown>;

function mapping(value: unknown, what: string): Mapping {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${what}: expected a mapping`);
  }
  return value as Mapping;
}

function sequence(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what}: expected a list`);
  return value;
}

function words(value: unknown, what: string): string[] {
  const items = sequence(value, what);
  if (!items.every((item): item is string => typeof item === 'string')) {
    throw new Error(`${what}: expected a list of strings`);
  }
  return items;
}

/** A scalar as the process would see it in its environment. */
function scalar(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${what}: expected a string`);
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// --- The image --------------------------------------------------------------------------

interface Image {
  workdir: string | undefined;
  /** ENV lines of the final stage. */
  env: Environment;
  /** What the final stage writes to .env.defaults in its WORKDIR. */
  defaults: string | undefined;
  entrypoint: string[] | undefined;
  cmd: string[] | undefined;
  /** As Docker stores it: ['CMD', ...]. */
  healthcheck: string[] | undefined;
  expose: number[];
}

function execForm(text: string, what: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${what} is in shell form (${text}): the test reads the exec form, ["node", ...]`);
  }
  return words(parsed, what);
}

/** The final stage of a Dockerfile, as far as running the bot goes. */
function parseDockerfile(text: string): Image {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const from = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  const image: Image = {
    workdir: undefined,
    env: {},
    defaults: undefined,
    entrypoint: undefined,
    cmd: undefined,
    healthcheck: undefined,
    expose: [],
  };
  for (const line of lines.slice(from + 1)) {
    const [, instruction = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    switch (instruction.toUpperCase()) {
      case 'WORKDIR':
        image.workdir = rest;
        break;
      case 'ENV':
        for (const [, name = '', value = ''] of rest.matchAll(/([A-Za-z_]\w*)=(\S*)/g))
          image.env[name] = value;
        break;
      case 'RUN': {
        const written = /printf\s+'([^']*)'\s*>\s*(\S+)/.exec(rest);
        if (written?.[2] === DEFAULTS_FILE) image.defaults = (written[1] ?? '').replace(/\\n/g, '\n');
        break;
      }
      case 'ENTRYPOINT':
        image.entrypoint = execForm(rest, 'ENTRYPOINT');
        break;
      case 'CMD':
        image.cmd = execForm(rest, 'CMD');
        break;
      case 'HEALTHCHECK': {
        if (/^NONE$/i.test(rest)) {
          image.healthcheck = undefined;
          break;
        }
        const command = /^(?:--\S+\s+)*CMD\s+(.*)$/i.exec(rest)?.[1];
        if (command === undefined) throw new Error(`HEALTHCHECK not understood: ${rest}`);
        image.healthcheck = ['CMD', ...execForm(command, 'HEALTHCHECK')];
        break;
      }
      case 'EXPOSE':
        image.expose.push(...rest.split(/\s+/).map((port) => Number.parseInt(port, 10)));
        break;
    }
  }
  return image;
}

const IMAGE = parseDockerfile(read('Dockerfile'));

/** A directory standing for the image's WORKDIR: its .env.defaults, and no .env (.dockerignore). */
let workdir = '';
beforeAll(() => {
  workdir = mkdtempSync(join(tmpdir(), 'deploy-test-'));
  writeFileSync(join(workdir, DEFAULTS_FILE), IMAGE.defaults ?? '');
});
afterAll(() => rmSync(workdir, { recursive: true, force: true }));

/** What the bot in the container reads: its process environment (image ENV under the manifest's), then the image's defaults. */
function containerEnvironment(manifest: Environment): Environment {
  return readEnvironment(workdir, { ...IMAGE.env, ...manifest });
}

// --- Hosts and their shards -------------------------------------------------------------

interface Host {
  name: string;
  env: Environment;
  config: Config;
}

/** Loads each host's environment with loadConfig; a host that does not load is a problem. */
function loadHosts(environments: Array<[string, Environment]>): { hosts: Host[]; problems: string[] } {
  const hosts: Host[] = [];
  const problems: string[] = [];
  for (const [name, manifest] of environments) {
    const env = containerEnvironment(manifest);
    try {
      hosts.push({ name, env, config: loadConfig(env) });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.map((problem) => `${name}: ${problem}`));
    }
  }
  return { hosts, problems };
}

/** The hosts, together: one shard count, one database, distinct names, every shard exactly once. */
function planProblems(hosts: Host[]): string[] {
  const problems: string[] = [];
  if (hosts.length === 0) return ['no host'];
  const counts = new Set(hosts.map((host) => host.config.sharding.shardCount));
  const [count] = counts;
  if (counts.size !== 1 || typeof count !== 'number') {
    problems.push(`the hosts must share one fixed SHARD_COUNT; they have ${[...counts].join(', ')}`);
  }
  const databases = new Set(hosts.map((host) => host.config.databaseUrl));
  if (databases.size !== 1 || databases.has(undefined))
    problems.push('the hosts must share one DATABASE_URL');
  const owners = new Map<string, string>();
  for (const host of hosts) {
    const other = owners.get(host.config.sharding.hostId);
    if (other !== undefined)
      problems.push(`${host.name} and ${other} are both HOST_ID ${host.config.sharding.hostId}`);
    owners.set(host.config.sharding.hostId, host.name);
  }
  const runners = new Map<number, string[]>();
  for (const host of hosts) {
    const shards = host.config.sharding.hostShards;
    if (shards === undefined) {
      problems.push(`${host.name} runs every shard: give it SHARD_IDS or HOST_INDEX with SHARDS_PER_HOST`);
      continue;
    }
    for (const shard of shards) runners.set(shard, [...(runners.get(shard) ?? []), host.name]);
  }
  for (const [shard, names] of [...runners].sort(([a], [b]) => a - b)) {
    if (names.length > 1) problems.push(`shard ${shard} runs on ${names.join(' and ')}`);
  }
  if (typeof count === 'number') {
    for (let shard = 0; shard < count; shard++) {
      if (!runners.has(shard)) problems.push(`shard ${shard} runs on no host`);
    }
  }
  return problems;
}

// --- Docker Compose ---------------------------------------------------------------------

function parseYaml(path: string): Mapping {
  const doc = parseDocument(read(path), { merge: true, prettyErrors: true });
  if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('\n')}`);
  return mapping(doc.toJS(), path);
}

/**
 * Compose's interpolation of one value: $$, $NAME, ${NAME}, ${NAME:-default}, ${NAME-default},
 * ${NAME:?error}, ${NAME?error}, ${NAME:+alternative}, ${NAME+alternative}.
 */
function interpolateText(text: string, variables: Environment): string {
  return text.replace(
    /\$(?:\$|\{([A-Za-z_]\w*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_]\w*))/g,
    (match, braced: string | undefined, operator: string | undefined, argument = '', bare?: string) => {
      if (match === '$$') return '$';
      const name = braced ?? bare ?? '';
      const value = variables[name];
      const missing = operator?.startsWith(':') ? value === undefined || value === '' : value === undefined;
      switch (operator?.replace(':', '')) {
        case '-':
          return missing ? argument : (value ?? '');
        case '?':
          if (missing) throw new Error(`compose refuses to start: ${name}: ${argument}`);
          return value ?? '';
        case '+':
          return missing ? '' : argument;
        default:
          return value ?? '';
      }
    },
  );
}

function interpolate(value: unknown, variables: Environment): unknown {
  if (typeof value === 'string') return interpolateText(value, variables);
  if (Array.isArray(value)) return value.map((item) => interpolate(item, variables));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolate(item, variables)]),
    );
  }
  return value;
}

/** A service's `environment`, in either of Compose's forms; a name without a value comes from the shell. */
function serviceEnvironment(service: Mapping, variables: Environment, what: string): Environment {
  const env: Environment = {};
  const given = service.environment;
  if (given === undefined) return env;
  if (Array.isArray(given)) {
    for (const entry of words(given, `${what}.environment`)) {
      const at = entry.indexOf('=');
      if (at === -1) env[entry] = variables[entry];
      else env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return env;
  }
  for (const [name, value] of Object.entries(mapping(given, `${what}.environment`))) {
    env[name] = value === null ? variables[name] : scalar(value, `${what}.environment.${name}`);
  }
  return env;
}

/** Compose's command or entrypoint: a list, or a string it splits on spaces. */
function commandLine(value: unknown, what: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(/\s+/).filter((word) => word !== '');
  return words(value, what);
}

/** What the REST proxy's container runs instead of the image's CMD (src/app/rest-proxy.ts, built). */
const REST_PROXY_COMMAND = ['node', 'dist/src/app/rest-proxy.js'];

/** The services built from the repository's Dockerfile (or running its image, `image:` alone). */
function imageServices(compose: Mapping): Array<[string, Mapping]> {
  return Object.entries(mapping(compose.services, 'services'))
    .map(([name, service]): [string, Mapping] => [name, mapping(service, `services.${name}`)])
    .filter(([, service]) => service.build !== undefined);
}

function runsRestProxy(service: Mapping, what: string): boolean {
  const command = commandLine(service.command, `${what}.command`);
  return command !== undefined && command.join(' ') === REST_PROXY_COMMAND.join(' ');
}

/** The bot hosts: the image's services but the REST proxy. */
function botServices(compose: Mapping): Array<[string, Mapping]> {
  return imageServices(compose).filter(([name, service]) => !runsRestProxy(service, name));
}

/** The REST proxy: the image's service that runs rest-proxy.js. */
function proxyServices(compose: Mapping): Array<[string, Mapping]> {
  return imageServices(compose).filter(([name, service]) => runsRestProxy(service, name));
}

function composeHosts(raw: Mapping, variables: Environment = COMPOSE_VARIABLES) {
  const compose = mapping(interpolate(raw, variables), COMPOSE_FILE);
  const services = botServices(compose);
  return {
    compose,
    services,
    ...loadHosts(
      services.map(([name, service]) => [name, serviceEnvironment(service, variables, `services.${name}`)]),
    ),
  };
}

/** A secret must be a reference, ${NAME} or ${NAME:?...}, never a value. */
const REFERENCE = String.raw`\$\{[A-Za-z_]\w*(?::?[-?][^}]*)?\}`;

/** Secrets written into the file rather than taken from the shell or deploy/.env. */
function composeSecretProblems(raw: Mapping): string[] {
  const problems: string[] = [];
  for (const [name, service] of Object.entries(mapping(raw.services, 'services'))) {
    const env = serviceEnvironment(mapping(service, name), {}, `services.${name}`);
    for (const [variable, value] of Object.entries(env)) {
      if (!SECRET_NAMES.has(variable) || value === undefined) continue;
      const pattern =
        variable === 'DATABASE_URL'
          ? new RegExp(`^postgres(?:ql)?://[^:@/]+:${REFERENCE}@`)
          : new RegExp(`^${REFERENCE}$`);
      if (!pattern.test(value)) {
        problems.push(
          `${name}: ${variable} is written in the file; take it from the environment (\${${variable}:?...})`,
        );
      }
    }
  }
  return problems;
}

/** The container side of each published port. */
function containerPorts(service: Mapping, what: string): Array<{ published: string; target: number }> {
  if (service.ports === undefined) return [];
  return sequence(service.ports, `${what}.ports`).map((port) => {
    if (typeof port === 'object' && port !== null) {
      const long = mapping(port, `${what}.ports`);
      return { published: `${long.host_ip ?? ''}:${long.published ?? ''}`, target: Number(long.target) };
    }
    const parts = scalar(port, `${what}.ports`)
      .replace(/\/\w+$/, '')
      .split(':');
    return { published: parts.slice(0, -1).join(':'), target: Number(parts.at(-1)) };
  });
}

/** The command line a container runs: ENTRYPOINT then CMD, each the image's unless replaced. */
function effectiveCommand(entrypoint: string[] | undefined, command: string[] | undefined): string[] {
  // Replacing the entrypoint drops the image's CMD (in Compose and in Kubernetes alike).
  if (entrypoint !== undefined) return [...entrypoint, ...(command ?? [])];
  return [...(IMAGE.entrypoint ?? []), ...(command ?? IMAGE.cmd ?? [])];
}

/** `npm start`, without the `exec` in front. */
function startScript(): string[] {
  const pkg = mapping(JSON.parse(read('package.json')), 'package.json');
  const start = scalar(mapping(pkg.scripts, 'scripts').start, 'scripts.start').split(/\s+/);
  return start[0] === 'exec' ? start.slice(1) : start;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

// --- Kubernetes -------------------------------------------------------------------------

function parseManifests(path: string): Mapping[] {
  return parseAllDocuments(read(path), { prettyErrors: true }).map((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('\n')}`);
    return mapping(doc.toJS(), `${path} document ${i + 1}`);
  });
}

function kind(manifests: Mapping[], name: string): Mapping[] {
  return manifests.filter((manifest) => manifest.kind === name);
}

function only(manifests: Mapping[], name: string): Mapping {
  const found = kind(manifests, name);
  if (found.length !== 1) throw new Error(`expected one ${name}, found ${found.length}`);
  return found[0]!;
}

function podTemplate(statefulSet: Mapping) {
  const spec = mapping(statefulSet.spec, 'spec');
  const template = mapping(spec.template, 'spec.template');
  const metadata = mapping(template.metadata, 'template.metadata');
  const podSpec = mapping(template.spec, 'template.spec');
  const containers = sequence(podSpec.containers, 'containers').map((c, i) => mapping(c, `containers[${i}]`));
  if (containers.length !== 1) throw new Error(`expected one container, found ${containers.length}`);
  return {
    spec,
    labels: mapping(metadata.labels ?? {}, 'template.metadata.labels'),
    podSpec,
    container: containers[0]!,
  };
}

const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** What the kubelet sets in pod `ordinal`'s environment, the Secret holding SECRET_VALUES. */
function podEnvironment(statefulSet: Mapping, ordinal: number): Environment {
  const name = scalar(mapping(statefulSet.metadata, 'metadata').name, 'metadata.name');
  const { labels, container } = podTemplate(statefulSet);
  if (container.envFrom !== undefined) throw new Error('envFrom: not read by this test; use env');
  const podLabels: Mapping = { ...labels, [POD_INDEX_LABEL]: String(ordinal) };
  const env: Environment = {};
  for (const [i, entry] of sequence(container.env ?? [], 'env').entries()) {
    const variable = mapping(entry, `env[${i}]`);
    const key = scalar(variable.name, `env[${i}].name`);
    if (variable.valueFrom === undefined) {
      const value = scalar(variable.value ?? '', `env.${key}`);
      if (value.includes('$(')) throw new Error(`env.${key}: $(VAR) references are not read by this test`);
      env[key] = value;
      continue;
    }
    const from = mapping(variable.valueFrom, `env.${key}.valueFrom`);
    if (from.fieldRef !== undefined) {
      const path = scalar(mapping(from.fieldRef, `env.${key}.fieldRef`).fieldPath, `env.${key}.fieldPath`);
      const label = /^metadata\.labels\['([^']+)'\]$/.exec(path)?.[1];
      if (path === 'metadata.name') env[key] = `${name}-${ordinal}`;
      else if (label !== undefined && podLabels[label] !== undefined) env[key] = String(podLabels[label]);
      else throw new Error(`env.${key}: the pod has no field ${path}`);
    } else if (from.secretKeyRef !== undefined) {
      const ref = mapping(from.secretKeyRef, `env.${key}.secretKeyRef`);
      if (SECRET_VALUES[key] !== undefined) env[key] = SECRET_VALUES[key];
      else if (ref.optional !== true) throw new Error(`env.${key}: no sample value for this secret`);
    } else {
      throw new Error(`env.${key}: valueFrom ${Object.keys(from).join(', ')} is not read by this test`);
    }
  }
  return env;
}

function statefulSetHosts(manifests: Mapping[]) {
  const statefulSet = only(manifests, 'StatefulSet');
  const replicas = Number(mapping(statefulSet.spec, 'spec').replicas ?? 1);
  const ordinals = Array.from({ length: replicas }, (_, ordinal) => ordinal);
  return {
    statefulSet,
    replicas,
    ...loadHosts(ordinals.map((ordinal) => [`pod ${ordinal}`, podEnvironment(statefulSet, ordinal)])),
  };
}

/** A probe's or a Service's port: a number, or the name of one of the container's ports. */
function resolvePort(port: unknown, container: Mapping): number | undefined {
  if (typeof port === 'number') return port;
  const named = sequence(container.ports ?? [], 'ports')
    .map((p) => mapping(p, 'ports[]'))
    .find((p) => p.name === port);
  return named === undefined ? undefined : Number(named.containerPort);
}

/** 256Mi, 0.25Gi, 268435456 ... in MiB. */
function mebibytes(quantity: unknown): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(String(quantity));
  if (!match) throw new Error(`not a memory quantity: ${String(quantity)}`);
  const factor: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };
  return (Number(match[1]) * (factor[match[2] ?? ''] ?? 1)) / 2 ** 20;
}

// --- The tests --------------------------------------------------------------------------

describe('the image', () => {
  it('runs what npm start runs, under an init, with a HEALTHCHECK and the defaults file', () => {
    expect(IMAGE.cmd).toEqual(startScript());
    expect(IMAGE.cmd).toEqual(['node', 'dist/src/app/main.js']);
    expect(IMAGE.entrypoint).toBeDefined();
    expect(IMAGE.healthcheck).toEqual(['CMD', 'node', 'dist/src/ops/healthcheck.js']);
    // dist/src/... is the build of src/... (tsconfig.build.json, rootDir ".").
    expect(existsSync(join(ROOT, 'src/app/main.ts'))).toBe(true);
    expect(existsSync(join(ROOT, 'src/ops/healthcheck.ts'))).toBe(true);
    expect(IMAGE.workdir).toBe('/app');
    expect(IMAGE.defaults).toMatch(/^HTTP_PORT=\d+$/m);
  });
});

describe(COMPOSE_FILE, () => {
  const raw = parseYaml(COMPOSE_FILE);
  const text = read(COMPOSE_FILE);

  it('has bot hosts built from the repository Dockerfile, each with its own configuration that loads', () => {
    const { services, hosts, problems } = composeHosts(raw);
    expect(problems).toEqual([]);
    expect(services.length).toBeGreaterThan(1);
    expect(hosts.map((host) => host.name)).toEqual(services.map(([name]) => name));
    for (const [name, service] of services) {
      const build =
        typeof service.build === 'string' ? { context: service.build } : mapping(service.build, name);
      expect(resolve(ROOT, 'deploy', scalar(build.context, `${name}.build.context`))).toBe(resolve(ROOT));
      expect(build.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
    }
  });

  it('splits the shards: one fixed SHARD_COUNT, every shard on exactly one host, distinct HOST_IDs, one database', () => {
    const { hosts } = composeHosts(raw);
    expect(planProblems(hosts)).toEqual([]);
    for (const host of hosts) expect(host.config.databaseUrl).toBe(SAMPLE_DATABASE_URL);
  });

  it('runs the image command (no command or entrypoint of its own) from the image WORKDIR', () => {
    for (const [name, service] of composeHosts(raw).services) {
      const command = effectiveCommand(
        commandLine(service.entrypoint, `${name}.entrypoint`),
        commandLine(service.command, `${name}.command`),
      );
      expect(command, name).toEqual([...(IMAGE.entrypoint ?? []), ...startScript()]);
      expect(service.working_dir, name).toBeUndefined();
    }
  });

  it('publishes the operations port, health-checks it as the image does, restarts, and stops gracefully', () => {
    const { services, hosts } = composeHosts(raw);
    const published = new Set<string>();
    for (const [name, service] of services) {
      const host = hosts.find((h) => h.name === name)!;
      const port = parsePort(host.env.HTTP_PORT);
      expect(port, name).toEqual({ ok: true, port: host.config.httpPort });
      expect(IMAGE.expose).toContain(host.config.httpPort);
      expect(LOOPBACK.has(host.config.httpHost), `${name} listens on loopback only`).toBe(false);
      const ports = containerPorts(service, name);
      expect(ports.map((p) => p.target)).toContain(host.config.httpPort);
      for (const { published: side } of ports) {
        expect(published.has(side), `${name} publishes ${side} again`).toBe(false);
        published.add(side);
      }
      if (service.healthcheck !== undefined) {
        const check = mapping(service.healthcheck, `${name}.healthcheck`);
        expect(check.disable).not.toBe(true);
        expect(commandLine(check.test, `${name}.healthcheck.test`)).toEqual(IMAGE.healthcheck);
      } else {
        expect(IMAGE.healthcheck).toBeDefined();
      }
      expect(service.restart).toBe('unless-stopped');
      const grace = parseDuration(scalar(service.stop_grace_period ?? '10s', `${name}.stop_grace_period`));
      expect(grace).toBeGreaterThan(SHUTDOWN_HARD_LIMIT_MS);
    }
  });

  it('waits for the PostgreSQL service the bots connect to, healthy, with its data in a named volume', () => {
    const { compose, services, hosts } = composeHosts(raw);
    const all = mapping(compose.services, 'services');
    for (const [name, service] of services) {
      const url = new URL(hosts.find((h) => h.name === name)!.config.databaseUrl!);
      const postgres = mapping(all[url.hostname], `service ${url.hostname}`);
      expect(scalar(postgres.image, 'postgres.image')).toMatch(/^postgres:15(?:[.-]|$)/);
      const env = serviceEnvironment(postgres, COMPOSE_VARIABLES, url.hostname);
      expect(decodeURIComponent(url.username)).toBe(env.POSTGRES_USER);
      expect(decodeURIComponent(url.password)).toBe(env.POSTGRES_PASSWORD);
      expect(url.pathname).toBe(`/${env.POSTGRES_DB}`);
      expect(mapping(postgres.healthcheck, 'postgres.healthcheck').test).toBeDefined();
      const dependsOn = mapping(service.depends_on, `${name}.depends_on`);
      expect(mapping(dependsOn[url.hostname], `${name}.depends_on`).condition).toBe('service_healthy');
      const volumes = words(postgres.volumes, 'postgres.volumes');
      const data = volumes.find((v) => v.endsWith(':/var/lib/postgresql/data'))?.split(':')[0];
      expect(Object.keys(mapping(compose.volumes, 'volumes'))).toContain(data);
    }
  });

  it('holds no secret: each is taken from the environment, and Compose refuses to start without the token', () => {
    expect(composeSecretProblems(raw)).toEqual([]);
    expect(text).not.toContain(SAMPLE_DISCORD_TOKEN);
    // The shape of a Discord bot token: base64 id, timestamp, HMAC.
    expect(text).not.toMatch(/[\w-]{23,28}\.[\w-]{6,7}\.[\w-]{27,}/);
    const { DISCORD_TOKEN: _, ...withoutToken } = COMPOSE_VARIABLES;
    expect(() => composeHosts(raw, withoutToken)).toThrow(/DISCORD_TOKEN/);
  });

  it('runs one REST proxy from the same image, health-checked on /healthz, that every host sends its bot-token requests to', () => {
    const compose = mapping(interpolate(raw, COMPOSE_VARIABLES), COMPOSE_FILE);
    const proxies = proxyServices(compose);
    // One: a second proxy would be a second global limit.
    expect(proxies.map(([name]) => name)).toHaveLength(1);
    const [name, service] = proxies[0]!;
    expect(existsSync(join(ROOT, 'src/app/rest-proxy.ts'))).toBe(true);
    const command = effectiveCommand(
      commandLine(service.entrypoint, `${name}.entrypoint`),
      commandLine(service.command, `${name}.command`),
    );
    expect(command).toEqual([...(IMAGE.entrypoint ?? []), ...REST_PROXY_COMMAND]);
    const [, firstBot] = botServices(compose)[0]!;
    expect(service.image).toBe(firstBot.image);
    expect(service.build).toEqual(firstBot.build);

    // Its configuration loads, with a port to listen on, on every address of the container.
    const env = containerEnvironment(serviceEnvironment(service, COMPOSE_VARIABLES, name));
    const config = loadConfig(env);
    const port = config.restProxy.port;
    expect(port).toBeGreaterThan(0);
    expect(LOOPBACK.has(config.restProxy.host)).toBe(false);
    // No secret: each request carries its host's token.
    for (const secret of SECRET_NAMES) expect(env[secret], `${name}: ${secret}`).toBeUndefined();
    // The image's probe, on the proxy's port.
    const check = mapping(service.healthcheck, `${name}.healthcheck`);
    expect(commandLine(check.test, `${name}.healthcheck.test`)).toEqual([
      ...(IMAGE.healthcheck ?? []),
      '--rest-proxy',
    ]);
    expect(parsePort(env.DISCORD_REST_PROXY_PORT, 'DISCORD_REST_PROXY_PORT')).toEqual({ ok: true, port });
    expect(service.restart).toBe('unless-stopped');
    expect(
      parseDuration(scalar(service.stop_grace_period ?? '10s', 'stop_grace_period')),
    ).toBeGreaterThanOrEqual(10_000);

    // Every host: the proxy for its bot-token requests (Discord direct for the interactions), and
    // started once the proxy is healthy.
    const { hosts } = composeHosts(raw);
    for (const [hostName, bot] of botServices(compose)) {
      const host = hosts.find((h) => h.name === hostName)!;
      expect(host.config.discord.restProxyUrl, hostName).toBe(`http://${name}:${port}/api`);
      expect(host.config.discord.apiUrl, hostName).toBe(config.discord.apiUrl);
      const dependsOn = mapping(bot.depends_on, `${hostName}.depends_on`);
      expect(mapping(dependsOn[name], `${hostName}.depends_on.${name}`).condition).toBe('service_healthy');
    }
  });

  it('fails when the ranges overlap, leave a shard out, or two hosts share a HOST_ID', () => {
    const environment = (compose: Mapping, i: number) =>
      mapping(botServices(compose)[i]?.[1].environment, `bot ${i} environment`);
    const overlapping = clone(raw);
    const bots = botServices(overlapping).map(([name]) => name);
    environment(overlapping, 1).SHARD_IDS = '1-2';
    environment(overlapping, 2).HOST_ID = environment(overlapping, 0).HOST_ID;
    const problems = planProblems(composeHosts(overlapping).hosts);
    expect(problems).toContain(`shard 1 runs on ${bots[0]} and ${bots[1]}`);
    expect(problems).toContain('shard 3 runs on no host');
    expect(problems).toContainEqual(expect.stringMatching(/are both HOST_ID/));

    const beyond = clone(raw);
    environment(beyond, 2).SHARD_IDS = '4-6';
    expect(composeHosts(beyond).problems).toContainEqual(
      expect.stringMatching(/SHARD_IDS: shard 6 does not exist/),
    );

    const literal = clone(raw);
    environment(literal, 0).DISCORD_TOKEN = SAMPLE_DISCORD_TOKEN;
    expect(composeSecretProblems(literal)).toHaveLength(1);
  });
});

describe(STATEFULSET_FILE, () => {
  const manifests = parseManifests(STATEFULSET_FILE);

  it('starts every pod at once, each with a configuration that loads, for every ordinal', () => {
    const { statefulSet, replicas, hosts, problems } = statefulSetHosts(manifests);
    expect(problems).toEqual([]);
    expect(hosts).toHaveLength(replicas);
    expect(mapping(statefulSet.spec, 'spec').podManagementPolicy).toBe('Parallel');
  });

  it('splits the shards: every shard on exactly one pod, replicas × SHARDS_PER_HOST = SHARD_COUNT', () => {
    const { statefulSet, replicas, hosts } = statefulSetHosts(manifests);
    expect(planProblems(hosts)).toEqual([]);
    const env = podEnvironment(statefulSet, 0);
    expect(replicas * Number(env.SHARDS_PER_HOST)).toBe(Number(env.SHARD_COUNT));
    const name = mapping(statefulSet.metadata, 'metadata').name;
    expect(hosts.map((host) => host.config.sharding.hostId)).toEqual(hosts.map((_, i) => `${name}-${i}`));
  });

  it('takes HOST_INDEX from the pod-index label and HOST_ID from the pod name', () => {
    const { container } = podTemplate(only(manifests, 'StatefulSet'));
    const env = new Map(
      sequence(container.env, 'env').map((e) => [mapping(e, 'env[]').name, mapping(e, 'env[]').valueFrom]),
    );
    const field = (name: string) =>
      mapping(mapping(env.get(name), `${name}.valueFrom`).fieldRef, `${name}.fieldRef`).fieldPath;
    expect(field('HOST_INDEX')).toBe(`metadata.labels['${POD_INDEX_LABEL}']`);
    expect(field('HOST_ID')).toBe('metadata.name');
  });

  it('runs the image command, probes /healthz and /readyz on HTTP_PORT, and has time to stop', () => {
    const statefulSet = only(manifests, 'StatefulSet');
    const { podSpec, container } = podTemplate(statefulSet);
    const [host] = statefulSetHosts(manifests).hosts;
    const command = effectiveCommand(
      container.command === undefined ? undefined : words(container.command, 'command'),
      container.args === undefined ? undefined : words(container.args, 'args'),
    );
    expect(command).toEqual([...(IMAGE.entrypoint ?? []), ...startScript()]);
    expect(container.workingDir).toBeUndefined();

    const port = host!.config.httpPort;
    expect(port).toBeDefined();
    expect(LOOPBACK.has(host!.config.httpHost)).toBe(false);
    const probe = (name: string) => {
      const httpGet = mapping(mapping(container[name], name).httpGet, `${name}.httpGet`);
      return { path: httpGet.path, port: resolvePort(httpGet.port, container) };
    };
    expect(probe('livenessProbe')).toEqual({ path: '/healthz', port });
    expect(probe('readinessProbe')).toEqual({ path: '/readyz', port });
    if (container.startupProbe !== undefined)
      expect(probe('startupProbe')).toEqual({ path: '/healthz', port });
    // More than the bot's own bound, so that its shutdown is never cut; not much more, so that a
    // pod that hangs past it is not waited for long.
    const grace = Number(podSpec.terminationGracePeriodSeconds) * 1_000;
    expect(grace).toBeGreaterThan(SHUTDOWN_HARD_LIMIT_MS);
    expect(grace).toBeLessThanOrEqual(SHUTDOWN_HARD_LIMIT_MS + 5_000);
  });

  it('rolls one pod at a time, with a partition for a canary, and lets disruptions take one pod at a time', () => {
    const statefulSet = only(manifests, 'StatefulSet');
    const { spec, labels } = podTemplate(statefulSet);
    const strategy = mapping(spec.updateStrategy, 'updateStrategy');
    expect(strategy.type).toBe('RollingUpdate');
    const partition = Number(mapping(strategy.rollingUpdate, 'rollingUpdate').partition);
    expect(partition).toBe(0);
    const budget = only(manifests, 'PodDisruptionBudget');
    expect(budget.apiVersion).toBe('policy/v1');
    const budgetSpec = mapping(budget.spec, 'PodDisruptionBudget.spec');
    expect(budgetSpec.maxUnavailable).toBe(1);
    expect(budgetSpec.minAvailable).toBeUndefined();
    expect(labels).toMatchObject(
      mapping(mapping(budgetSpec.selector, 'selector').matchLabels, 'matchLabels'),
    );
  });

  it('has a headless Service for the StatefulSet, selecting its pods', () => {
    const statefulSet = only(manifests, 'StatefulSet');
    const { spec, labels, container } = podTemplate(statefulSet);
    const service = only(manifests, 'Service');
    const serviceSpec = mapping(service.spec, 'Service.spec');
    expect(serviceSpec.clusterIP).toBe('None');
    expect(spec.serviceName).toBe(mapping(service.metadata, 'Service.metadata').name);
    expect(labels).toMatchObject(mapping(serviceSpec.selector, 'Service.spec.selector'));
    expect(labels).toMatchObject(mapping(mapping(spec.selector, 'selector').matchLabels, 'matchLabels'));
    const [host] = statefulSetHosts(manifests).hosts;
    for (const p of sequence(serviceSpec.ports, 'Service.spec.ports')) {
      const target = mapping(p, 'Service port').targetPort ?? mapping(p, 'Service port').port;
      expect(resolvePort(target, container)).toBe(host!.config.httpPort);
    }
  });

  it('requests and limits memory as a Node bot needs', () => {
    const { container } = podTemplate(only(manifests, 'StatefulSet'));
    const resources = mapping(container.resources, 'resources');
    const requested = mebibytes(mapping(resources.requests, 'requests').memory);
    const limit = mebibytes(mapping(resources.limits, 'limits').memory);
    expect(requested).toBeGreaterThanOrEqual(128);
    expect(requested).toBeLessThanOrEqual(limit);
    expect(limit).toBeLessThanOrEqual(512);
  });

  it('holds no secret: the bot secrets come from a Secret by reference', () => {
    expect(kind(manifests, 'Secret')).toEqual([]);
    const { container } = podTemplate(only(manifests, 'StatefulSet'));
    for (const entry of sequence(container.env, 'env')) {
      const variable = mapping(entry, 'env[]');
      if (!SECRET_NAMES.has(String(variable.name))) continue;
      expect(variable.value, String(variable.name)).toBeUndefined();
      expect(mapping(variable.valueFrom, 'valueFrom').secretKeyRef, String(variable.name)).toBeDefined();
    }
    expect(read(STATEFULSET_FILE)).not.toMatch(/[\w-]{23,28}\.[\w-]{6,7}\.[\w-]{27,}/);
  });

  it('fails when replicas × SHARDS_PER_HOST does not make SHARD_COUNT', () => {
    const fewer = clone(manifests);
    mapping(only(fewer, 'StatefulSet').spec, 'spec').replicas = 2;
    expect(planProblems(statefulSetHosts(fewer).hosts)).toEqual([
      'shard 4 runs on no host',
      'shard 5 runs on no host',
    ]);

    const wider = clone(manifests);
    const { container } = podTemplate(only(wider, 'StatefulSet'));
    const perHost = sequence(container.env, 'env')
      .map((e) => mapping(e, 'env[]'))
      .find((e) => e.name === 'SHARDS_PER_HOST')!;
    perHost.value = '3';
    expect(statefulSetHosts(wider).problems).toContainEqual(
      expect.stringMatching(/^pod 2: HOST_INDEX: shard 6 does not exist/),
    );
  });
});

describe(REST_PROXY_FILE, () => {
  const manifests = parseManifests(REST_PROXY_FILE);
  const deployment = only(manifests, 'Deployment');
  const { spec, labels, podSpec, container } = podTemplate(deployment);
  const env = containerEnvironment(podEnvironment(deployment, 0));

  it('runs one proxy, never two at once, from the image with the proxy entry, with a configuration that loads', () => {
    expect(Number(spec.replicas ?? 1)).toBe(1);
    expect(mapping(spec.strategy, 'strategy').type).toBe('Recreate');
    const command = effectiveCommand(
      container.command === undefined ? undefined : words(container.command, 'command'),
      container.args === undefined ? undefined : words(container.args, 'args'),
    );
    expect(command).toEqual([...(IMAGE.entrypoint ?? []), ...REST_PROXY_COMMAND]);
    const [statefulSetPod] = sequence(
      podTemplate(only(parseManifests(STATEFULSET_FILE), 'StatefulSet')).podSpec.containers,
      'containers',
    );
    expect(container.image).toBe(mapping(statefulSetPod, 'container').image);
    const config = loadConfig(env);
    expect(config.restProxy.port).toBeGreaterThan(0);
    expect(LOOPBACK.has(config.restProxy.host)).toBe(false);
    expect(podSpec.enableServiceLinks).toBe(false);
    expect(Number(podSpec.terminationGracePeriodSeconds)).toBeGreaterThanOrEqual(10);
  });

  it('probes /healthz on the port it listens on, and holds no secret', () => {
    const port = loadConfig(env).restProxy.port;
    for (const name of ['livenessProbe', 'readinessProbe']) {
      const httpGet = mapping(mapping(container[name], name).httpGet, `${name}.httpGet`);
      expect({ path: httpGet.path, port: resolvePort(httpGet.port, container) }, name).toEqual({
        path: '/healthz',
        port,
      });
    }
    for (const secret of SECRET_NAMES) expect(env[secret], secret).toBeUndefined();
    expect(kind(manifests, 'Secret')).toEqual([]);
  });

  it('has a Service for it, which every pod of the StatefulSet sends its bot-token requests to', () => {
    const service = only(manifests, 'Service');
    const serviceSpec = mapping(service.spec, 'Service.spec');
    expect(labels).toMatchObject(mapping(serviceSpec.selector, 'Service.spec.selector'));
    expect(labels).toMatchObject(mapping(mapping(spec.selector, 'selector').matchLabels, 'matchLabels'));
    const [servicePort] = sequence(serviceSpec.ports, 'Service.spec.ports').map((p) => mapping(p, 'port'));
    expect(resolvePort(servicePort?.targetPort ?? servicePort?.port, container)).toBe(
      loadConfig(env).restProxy.port,
    );
    // The bot's pods are not selected by it, nor it by theirs.
    const bots = podTemplate(only(parseManifests(STATEFULSET_FILE), 'StatefulSet')).labels;
    expect(bots).not.toMatchObject(mapping(serviceSpec.selector, 'Service.spec.selector'));
    const name = scalar(mapping(service.metadata, 'Service.metadata').name, 'Service name');
    for (const host of statefulSetHosts(parseManifests(STATEFULSET_FILE)).hosts) {
      expect(host.config.discord.restProxyUrl, host.name).toBe(`http://${name}:${servicePort?.port}/api`);
      expect(host.config.discord.apiUrl, host.name).toBe(loadConfig(env).discord.apiUrl);
    }
  });
});

/**
 * Flags and their parsing. There is no CLI framework in the project on purpose: node:util
 * `parseArgs` is built in, maintained with Node itself and strict enough (unknown flags, missing
 * values), so the command line needs no dependency.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { parseDuration } from '../config/env.js';
import type { OperatorMessage } from '../i18n/operator.js';
import { cliError, UsageError } from './errors.js';

/** How long a command waits for the directory when --max-wait is not given. */
export const DEFAULT_MAX_WAIT_MS = 30_000;

export interface FlagSpec {
  name: string;
  type: 'string' | 'boolean';
  /** Placeholder of the value in help, e.g. 'N' or 'URL'. */
  value?: string;
  short?: string;
  /** Shown as such in the usage line and its help; the description is `cli.flags.<command>.<name>` in the operator catalogs. */
  required?: true;
  /** For global flags: the configuration variable the flag overrides. */
  variable?: string;
}

export const HELP_FLAG: FlagSpec = { name: 'help', type: 'boolean', short: 'h' };

export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    name: 'url',
    type: 'string',
    value: 'URL',
    variable: 'DIRECTORY_API_URL',
  },
  {
    name: 'api-version',
    type: 'string',
    value: 'v3|v2|v1',
    variable: 'DIRECTORY_API_VERSION',
  },
  {
    name: 'token',
    type: 'string',
    value: 'TOKEN',
    variable: 'DIRECTORY_TOKEN',
  },
  {
    name: 'token-kind',
    type: 'string',
    value: 'Bot|PrivateBot|Profile',
    variable: 'DIRECTORY_TOKEN_KIND',
  },
  {
    name: 'search-url',
    type: 'string',
    value: 'URL',
    variable: 'DIRECTORY_SEARCH_URL',
  },
  {
    name: 'timeout',
    type: 'string',
    value: 'MS',
    variable: 'DIRECTORY_TIMEOUT_MS',
  },
  {
    name: 'retries',
    type: 'string',
    value: 'N',
    variable: 'DIRECTORY_MAX_RETRIES',
  },
  {
    name: 'max-wait',
    type: 'string',
    value: 'DURATION',
  },
  { name: 'json', type: 'boolean' },
  HELP_FLAG,
  { name: 'version', type: 'boolean' },
];

export type ParsedValues = Record<string, string | boolean | undefined>;

export interface Parsed {
  values: ParsedValues;
  positionals: string[];
}

function toConfig(flags: readonly FlagSpec[]): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const flag of flags) {
    options[flag.name] = flag.short ? { type: flag.type, short: flag.short } : { type: flag.type };
  }
  return options;
}

/**
 * parseArgs's complaint in the operator's language: its own English words, and for the other
 * languages the catalog's, with the option it names.
 */
function parseArgsProblem(err: unknown): OperatorMessage | string {
  const english = err instanceof Error ? err.message : String(err);
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  const option = /'(?:-\w, )?(--?[^\s',]+)/.exec(english)?.[1];
  if (option === undefined) return english;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return { ...cliError('unknownOption', { option }), english };
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const key = english.includes('does not take') ? 'optionTakesNoValue' : 'optionValueMissing';
    return { ...cliError(key, { option }), english };
  }
  return english;
}

/** Strict parse: unknown flags, missing values and repeated flags become UsageErrors. */
export function parseFlags(args: readonly string[], flags: readonly FlagSpec[], command?: string): Parsed {
  let result: ReturnType<typeof parseArgs>;
  try {
    result = parseArgs({ args: [...args], options: toConfig(flags), strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(parseArgsProblem(err), command);
  }
  // No flag is declared `multiple`: a repeated flag keeps its last value, as parseArgs does.
  const values: ParsedValues = {};
  for (const [key, value] of Object.entries(result.values)) {
    values[key] = Array.isArray(value) ? value.at(-1) : value;
  }
  return { values, positionals: result.positionals };
}

/** True when -h/--help appears before a `--`. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/**
 * Finds the command words: the first positional, and for a command with subcommands the next.
 * Values of string flags are skipped (`--url X bot 1` finds `bot`).
 */
export function findPositionals(
  args: readonly string[],
  stringFlags: ReadonlySet<string>,
  count: number,
  from = 0,
): number[] {
  const found: number[] = [];
  for (let i = from; i < args.length && found.length < count; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') break;
    if (arg.startsWith('--')) {
      if (!arg.includes('=') && stringFlags.has(arg.slice(2))) i++;
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      if (arg.length === 2 && stringFlags.has(arg.slice(1))) i++;
      continue;
    }
    found.push(i);
  }
  return found;
}

export function stringFlagNames(flags: readonly FlagSpec[]): Set<string> {
  const names = new Set<string>();
  for (const flag of flags) {
    if (flag.type !== 'string') continue;
    names.add(flag.name);
    if (flag.short) names.add(flag.short);
  }
  return names;
}

/** A required string flag. */
export function required(values: ParsedValues, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.length === 0) {
    throw new UsageError(cliError('missingFlag', { name }), command);
  }
  return value;
}

export function optional(values: ParsedValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A whole number of at least 0 given as a flag value. */
export function count(value: string, name: string, command: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new UsageError(cliError('notCount', { name, value: JSON.stringify(value) }), command);
  }
  return n;
}

export function optionalCount(values: ParsedValues, name: string, command: string): number | undefined {
  const value = optional(values, name);
  return value === undefined ? undefined : count(value, name, command);
}

/** --max-wait in milliseconds: a duration (`30s`, `2m`, `1500ms`) or a bare number of milliseconds. */
export function maxWait(values: ParsedValues, command: string): number {
  const value = optional(values, 'max-wait');
  if (value === undefined) return DEFAULT_MAX_WAIT_MS;
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw new UsageError(cliError('maxWait', { value: JSON.stringify(value) }), command);
  }
  return ms;
}

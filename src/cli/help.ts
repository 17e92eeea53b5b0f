/** Help texts and the version. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINTS } from '../directory/endpoints.js';
import { COMMANDS, type Command, subcommandsOf, versionsOf } from './commands.js';
import { type FlagSpec, GLOBAL_FLAGS } from './flags.js';

export const EXIT_CODES_HELP = [
  '0 ok',
  '1 unexpected error',
  '2 usage or configuration (unknown command or flag, missing or bad argument, bad request)',
  '3 token refused (unauthorized, forbidden, token kind not accepted)',
  '4 not found',
  '5 rate limited',
  '6 directory unavailable (5xx, network, timeout)',
  '7 unusable answer from the directory',
  '8 the output could not be written (full disk; silent for a closed pipe)',
];

const HELP_WIDTH = 100;

/** Words of `text` in lines of at most `width` characters (a longer word gets its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line.length > 0 ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines;
}

/** Two columns; the right one wraps so that no line passes HELP_WIDTH. */
function columns(rows: readonly (readonly [string, string])[], indent = 2): string[] {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  const pad = indent + width + 2;
  return rows.flatMap(([left, right]) => {
    const [first = '', ...rest] = wrap(right, Math.max(30, HELP_WIDTH - pad));
    return [
      `${' '.repeat(indent)}${left.padEnd(width)}  ${first}`.trimEnd(),
      ...rest.map((line) => `${' '.repeat(pad)}${line}`),
    ];
  });
}

function flagLabel(flag: FlagSpec): string {
  const long = `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`;
  return flag.short ? `-${flag.short}, ${long}` : `    ${long}`;
}

function flagRows(flags: readonly FlagSpec[]): [string, string][] {
  return flags.map((f) => [flagLabel(f), f.variable ? `${f.description} [${f.variable}]` : f.description]);
}

/** Every usage line of a command: its own (`Command.usage`, one per version) or the one built from its flags. */
export function usageLines(command: Command): string[] {
  return command.usage?.map((line) => `directory ${command.name} ${line}`) ?? [usageLine(command)];
}

export function usageLine(command: Command): string {
  if (command.usage !== undefined) return usageLines(command).join(' | ');
  const required = command.flags
    .filter((f) => f.description.endsWith('(required)'))
    .map((f) => `--${f.name} ${f.value ?? ''}`.trimEnd());
  const optional = command.flags.length > required.length ? ['[options]'] : [];
  return ['directory', command.name, ...command.args, ...required, ...optional].join(' ');
}

/** What each endpoint of the command asks of the token, per version (read from ENDPOINTS). */
function tokenLine(command: Command): string {
  const parts = command.endpoints.map((name) => {
    const endpoint = ENDPOINTS[name];
    const said: string[] = [];
    const old = endpoint.versions.filter((v) => v !== 'v3');
    if (old.length > 0) {
      said.push(
        endpoint.kinds === 'none'
          ? `${old.join('/')}: none needed`
          : `${old.join('/')}: a token${old.includes('v2') ? `, kinds accepted in v2: ${endpoint.kinds.join(', ')}` : ''}`,
      );
    }
    if (endpoint.versions.includes('v3') && endpoint.v3 !== undefined) {
      said.push(
        endpoint.v3.key === 'required'
          ? 'v3: the API key (bare)'
          : 'v3: none needed (the API key is sent when set)',
      );
    }
    // Public on every version: one phrase (the v3 key still goes with it, for its rate limit).
    if (endpoint.kinds === 'none' && endpoint.v3?.key !== 'required') {
      return endpoint.v3 ? 'none needed (v3 sends the API key when set)' : 'none needed';
    }
    return said.join('; ');
  });
  return [...new Set(parts)].join(' / ');
}

function versionsLabel(command: Command): string {
  return `API ${versionsOf(command).join(', ')}`;
}

export function globalHelp(): string {
  const rows = COMMANDS.map((c): [string, string] => [
    `${c.name} ${c.args.join(' ')}`.trimEnd(),
    `${c.summary} [${versionsLabel(c)}]`,
  ]);
  return [
    'directory: look up and update the bot directory from the command line',
    '',
    'Usage: directory <command> [arguments] [options]',
    '       directory <command> --help',
    '',
    'Commands (in brackets: the API versions each works on; the default is v3):',
    ...columns(rows),
    '',
    'Global options (each overrides the configuration variable in brackets; .env is read too):',
    ...columns(flagRows(GLOBAL_FLAGS)),
    '',
    'Exit codes:',
    ...EXIT_CODES_HELP.map((line) => `  ${line}`),
    '',
  ].join('\n');
}

export function commandHelp(command: Command): string {
  const summary = `${command.summary.charAt(0).toUpperCase()}${command.summary.slice(1)}.`;
  const [first, ...more] = usageLines(command);
  const lines = [
    `Usage: ${first}`,
    ...more.map((line) => `       ${line}`),
    '',
    summary,
    '',
    `Works on: ${versionsLabel(command)}`,
    `Token: ${tokenLine(command)}`,
  ];
  if (command.flags.length > 0) lines.push('', 'Options:', ...columns(flagRows(command.flags)));
  if (command.notes?.length) lines.push('', ...command.notes);
  lines.push('', "Global options (--api-version, --url, --token, --json, ...): see 'directory --help'.", '');
  return lines.join('\n');
}

export function groupHelp(group: string): string {
  const rows = subcommandsOf(group).map((c): [string, string] => [usageLine(c), c.summary]);
  return [
    `Usage: directory ${group} <${subcommandsOf(group)
      .map((c) => c.name.slice(group.length + 1))
      .join('|')}> [options]`,
    '',
    ...columns(rows),
    '',
    `Run 'directory ${group} <subcommand> --help' for its options.`,
    '',
  ].join('\n');
}

/** The version in the package.json above this file (src/cli or dist/src/cli). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
        if (
          typeof json === 'object' &&
          json !== null &&
          'version' in json &&
          typeof json.version === 'string'
        ) {
          return json.version;
        }
      } catch {
        // keep looking upwards
      }
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

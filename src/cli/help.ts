/**
 * Help texts, in the operator's language (i18n/operator.ts; the texts are under `cli.` in its
 * catalogs), and the version. Command words, flags, placeholders and variable names stay as typed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINTS } from '../directory/endpoints.js';
import { type OperatorLanguage, type OperatorTranslate, operatorTranslator } from '../i18n/operator.js';
import { COMMANDS, type Command, commandKey, subcommandsOf, versionsOf } from './commands.js';
import { EXIT } from './errors.js';
import { type FlagSpec, GLOBAL_FLAGS } from './flags.js';

/** The exit codes and what each means, one line each. */
export function exitCodesHelp(language: OperatorLanguage = 'en'): string[] {
  const t = operatorTranslator(language);
  return [...new Set(Object.values(EXIT))]
    .sort((a, b) => a - b)
    .map((code) => `${code} ${t(`cli.exit.${code}`)}`);
}

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

/** `scope`: 'global', or the command's key (commandKey). */
function flagRows(flags: readonly FlagSpec[], scope: string, t: OperatorTranslate): [string, string][] {
  return flags.map((f) => {
    const said = t(`cli.flags.${scope}.${f.name}`);
    const description = f.required ? `${said} ${t('cli.help.required')}` : said;
    return [flagLabel(f), f.variable ? `${description} [${f.variable}]` : description];
  });
}

/** Every usage line of a command: its own (`Command.usage`, one per version) or the one built from its flags. */
export function usageLines(command: Command, language: OperatorLanguage = 'en'): string[] {
  return command.usage?.map((line) => `directory ${command.name} ${line}`) ?? [usageLine(command, language)];
}

export function usageLine(command: Command, language: OperatorLanguage = 'en'): string {
  if (command.usage !== undefined) return usageLines(command, language).join(' | ');
  const required = command.flags
    .filter((f) => f.required)
    .map((f) => `--${f.name} ${f.value ?? ''}`.trimEnd());
  const optional =
    command.flags.length > required.length ? [operatorTranslator(language)('cli.help.options')] : [];
  return ['directory', command.name, ...command.args, ...required, ...optional].join(' ');
}

function summaryOf(command: Command, t: OperatorTranslate): string {
  return t(`cli.commands.${commandKey(command.name)}.summary`);
}

/** What each endpoint of the command asks of the token, per version (read from ENDPOINTS). */
function tokenLine(command: Command, t: OperatorTranslate): string {
  const parts = command.endpoints.map((name) => {
    const endpoint = ENDPOINTS[name];
    const said: string[] = [];
    const old = endpoint.versions.filter((v) => v !== 'v3');
    if (old.length > 0) {
      const versions = old.join('/');
      if (endpoint.kinds === 'none') said.push(t('cli.help.tokenNone', { versions }));
      else if (old.includes('v2'))
        said.push(t('cli.help.tokenKinds', { versions, kinds: endpoint.kinds.join(', ') }));
      else said.push(t('cli.help.tokenAny', { versions }));
    }
    if (endpoint.versions.includes('v3') && endpoint.v3 !== undefined) {
      said.push(t(endpoint.v3.key === 'required' ? 'cli.help.tokenV3Key' : 'cli.help.tokenV3Optional'));
    }
    // Public on every version: one phrase (the v3 key still goes with it, for its rate limit).
    if (endpoint.kinds === 'none' && endpoint.v3?.key !== 'required') {
      return t(endpoint.v3 ? 'cli.help.tokenPublicV3' : 'cli.help.tokenPublic');
    }
    return said.join('; ');
  });
  return [...new Set(parts)].join(' / ');
}

function versionsLabel(command: Command): string {
  return `API ${versionsOf(command).join(', ')}`;
}

/** `Usage: first`, the others under it. */
function usage(lines: readonly string[], t: OperatorTranslate): string[] {
  const heading = t('cli.help.usage');
  return lines.map((line, i) => `${i === 0 ? heading : ' '.repeat(heading.length)} ${line}`);
}

export function globalHelp(language: OperatorLanguage = 'en'): string {
  const t = operatorTranslator(language);
  const rows = COMMANDS.map((c): [string, string] => [
    `${c.name} ${c.args.join(' ')}`.trimEnd(),
    `${summaryOf(c, t)} [${versionsLabel(c)}]`,
  ]);
  return [
    t('cli.help.title'),
    '',
    ...usage([t('cli.help.globalSyntax'), t('cli.help.globalHelpSyntax')], t),
    '',
    t('cli.help.commandsHeading'),
    ...columns(rows),
    '',
    t('cli.help.globalOptionsHeading'),
    ...columns(flagRows(GLOBAL_FLAGS, 'global', t)),
    '',
    t('cli.help.exitCodesHeading'),
    ...exitCodesHelp(language).map((line) => `  ${line}`),
    '',
  ].join('\n');
}

export function commandHelp(command: Command, language: OperatorLanguage = 'en'): string {
  const t = operatorTranslator(language);
  const said = summaryOf(command, t);
  const summary = `${said.charAt(0).toUpperCase()}${said.slice(1)}.`;
  const lines = [
    ...usage(usageLines(command, language), t),
    '',
    summary,
    '',
    t('cli.help.worksOn', { versions: versionsLabel(command) }),
    t('cli.help.token', { token: tokenLine(command, t) }),
  ];
  const key = commandKey(command.name);
  if (command.flags.length > 0) {
    lines.push('', t('cli.help.optionsHeading'), ...columns(flagRows(command.flags, key, t)));
  }
  if (command.notes) lines.push('', ...t(`cli.commands.${key}.notes`).split('\n'));
  lines.push('', t('cli.help.globalOptionsHint'), '');
  return lines.join('\n');
}

export function groupHelp(group: string, language: OperatorLanguage = 'en'): string {
  const t = operatorTranslator(language);
  const commands = subcommandsOf(group);
  const rows = commands.map((c): [string, string] => [usageLine(c, language), summaryOf(c, t)]);
  const choices = commands.map((c) => c.name.slice(group.length + 1)).join('|');
  return [
    ...usage([`directory ${group} <${choices}> ${t('cli.help.options')}`], t),
    '',
    ...columns(rows),
    '',
    t('cli.help.groupHint', { group }),
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

/**
 * The whole command line as one function, for main.ts and for tests: parse, configure, call the
 * client, print, and turn every failure into an exit code and one line on stderr (one JSON object
 * with --json). Help and errors are in the operator's language (LC_ALL, LC_MESSAGES or LANG of
 * the environment given); --json keeps English, as the machine that reads it expects.
 */
import { type Environment, loadConfig } from '../config/env.js';
import { DirectoryClient } from '../directory/client.js';
import { type OperatorLanguage, operatorLanguage, say } from '../i18n/operator.js';
import { COMMANDS, type Command, findCommand, GROUPS, subcommandsOf, versionsOf } from './commands.js';
import {
  cliError,
  describeFailure,
  EXIT,
  type Failure,
  OutputError,
  UsageError,
  VersionError,
} from './errors.js';
import {
  findPositionals,
  GLOBAL_FLAGS,
  maxWait,
  type ParsedValues,
  parseFlags,
  stringFlagNames,
  wantsHelp,
} from './flags.js';
import { toJson } from './format.js';
import { commandHelp, globalHelp, groupHelp, packageVersion, usageLines } from './help.js';
import { ECHO_LENGTH, type Output, type Printer, printer } from './output.js';

export interface CliIo {
  stdout: Output;
  stderr: Output;
  /** The environment the configuration is read from (main.ts passes readEnvironment()). */
  env: Environment;
  now?: () => number;
}

/** Token values given on the command line, collected before anything can fail. */
function tokensIn(argv: readonly string[]): string[] {
  const found: string[] = [];
  argv.forEach((arg, i) => {
    if (arg === '--token' && argv[i + 1] !== undefined) found.push(argv[i + 1] ?? '');
    else if (arg.startsWith('--token=')) found.push(arg.slice('--token='.length));
  });
  return found;
}

function describe(value: string): string {
  return JSON.stringify(value.length > ECHO_LENGTH ? `${value.slice(0, ECHO_LENGTH)}…` : value);
}

interface Located {
  command: Command;
  /** argv without the command words. */
  rest: string[];
}

/** Finds the command words in argv; returns a help text instead when only help can be given. */
function locate(argv: readonly string[], language: OperatorLanguage): Located | { help: string } {
  const globalStrings = stringFlagNames(GLOBAL_FLAGS);
  const [first] = findPositionals(argv, globalStrings, 1);
  if (first === undefined) {
    if (wantsHelp(argv)) return { help: globalHelp(language) };
    const { values } = parseFlags(argv, GLOBAL_FLAGS);
    if (values.version === true) return { help: `${packageVersion()}\n` };
    throw new UsageError(cliError('missingCommand'));
  }
  const word = argv[first] ?? '';
  if (word === 'help') {
    return {
      help: helpFor(
        argv.slice(first + 1).filter((a) => !a.startsWith('-')),
        language,
      ),
    };
  }
  const skip = [first];
  let name = word;
  if (GROUPS.has(word)) {
    const groupStrings = new Set([
      ...globalStrings,
      ...subcommandsOf(word).flatMap((c) => [...stringFlagNames(c.flags)]),
    ]);
    const [second] = findPositionals(argv, groupStrings, 1, first + 1);
    const choices = subcommandsOf(word)
      .map((c) => c.name.slice(word.length + 1))
      .join(', ');
    if (second === undefined) {
      if (wantsHelp(argv)) return { help: groupHelp(word, language) };
      throw new UsageError(cliError('missingSubcommand', { group: word, choices }), word);
    }
    name = `${word} ${argv[second] ?? ''}`;
    skip.push(second);
    if (findCommand(name) === undefined) {
      const value = describe(argv[second] ?? '');
      throw new UsageError(cliError('unknownSubcommand', { group: word, value, choices }), word);
    }
  }
  const command = findCommand(name);
  if (command === undefined) throw new UsageError(cliError('unknownCommand', { value: describe(word) }));
  if (wantsHelp(argv)) return { help: commandHelp(command, language) };
  return { command, rest: argv.filter((_, i) => !skip.includes(i)) };
}

/** `directory help [command words]`. */
function helpFor(words: readonly string[], language: OperatorLanguage): string {
  if (words.length === 0) return globalHelp(language);
  const name = words.join(' ');
  const command = findCommand(name);
  if (command !== undefined) return commandHelp(command, language);
  if (words.length === 1 && GROUPS.has(name)) return groupHelp(name, language);
  throw new UsageError(cliError('unknownCommand', { value: describe(name) }));
}

function checkPositionals(command: Command, positionals: readonly string[]): void {
  if (positionals.length < command.args.length) {
    throw new UsageError(
      cliError('missingArgument', { arg: command.args[positionals.length] ?? '' }),
      command.name,
    );
  }
  if (positionals.length > command.args.length) {
    const value = describe(positionals[command.args.length] ?? '');
    throw new UsageError(cliError('unexpectedArgument', { value }), command.name);
  }
}

/** The environment with the global flags laid over it, and which variables came from flags. */
function overlay(
  env: Environment,
  values: ParsedValues,
): { env: Environment; fromFlags: Map<string, string> } {
  const merged: Environment = { ...env };
  const fromFlags = new Map<string, string>();
  for (const flag of GLOBAL_FLAGS) {
    const value = values[flag.name];
    if (flag.variable === undefined || typeof value !== 'string') continue;
    merged[flag.variable] = value;
    fromFlags.set(flag.variable, `--${flag.name}`);
  }
  return { env: merged, fromFlags };
}

/** `--json` before any `--`: looked for before the flags are parsed, so a usage error is JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * One line on stderr, then a usage hint for a usage error, in `language`; with --json one object,
 * no hint (its message is in English: describeFailure is given 'en' then).
 */
function report(failure: Failure, json: boolean, language: OperatorLanguage): string {
  if (json) {
    const { kind, status, message } = failure;
    return `${JSON.stringify({ error: { kind, status, message } })}\n`;
  }
  const t = (key: string, params?: Record<string, string>): string =>
    say(language, `cli.report.${key}`, params);
  const lines = [`directory: ${failure.message}`];
  if (failure.usage) {
    const command = failure.command === undefined ? undefined : findCommand(failure.command);
    if (command !== undefined) {
      lines.push(
        ...usageLines(command, language).map((line) => t('usage', { line })),
        t('seeCommandHelp', { command: command.name }),
      );
    } else if (failure.command !== undefined) {
      lines.push(t('seeSubcommands', { command: failure.command }));
    } else {
      const names = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]))].join(', ');
      lines.push(t('commands', { names }), t('seeHelp'));
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const secrets = new Set<string>(tokensIn(argv));
  const envToken = io.env.DIRECTORY_TOKEN?.trim();
  if (envToken) secrets.add(envToken);
  const stdout: Printer = printer(io.stdout, secrets);
  const stderr: Printer = printer(io.stderr, secrets);
  const now = io.now ?? Date.now;
  const language = operatorLanguage(io.env);
  let json = wantsJson(argv);
  let fromFlags = new Map<string, string>();
  let label: string | undefined;
  let client: DirectoryClient | undefined;
  try {
    const located = locate(argv, language);
    if ('help' in located) {
      await stdout(located.help);
      return EXIT.ok;
    }
    const { command, rest } = located;
    const { values, positionals } = parseFlags(rest, [...GLOBAL_FLAGS, ...command.flags], command.name);
    json = values.json === true;
    if (values.version === true) {
      await stdout(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    checkPositionals(command, positionals);
    label = command.label?.(positionals) ?? command.name;
    const layered = overlay(io.env, values);
    fromFlags = layered.fromFlags;
    const config = loadConfig(layered.env).directory;
    if (config.token) secrets.add(config.token);
    const versions = versionsOf(command);
    if (!versions.includes(config.version)) {
      const use = versions[0] ?? 'v2';
      throw new VersionError(
        cliError('versionOnly', { label, versions: versions.join(', '), version: config.version, use }),
      );
    }
    client = new DirectoryClient({ ...config, maxWaitMs: maxWait(values, command.name) });
    const result = await command.execute({ client, values, args: positionals, now });
    await stdout(json ? toJson(result.data) : result.text);
    return EXIT.ok;
  } catch (err) {
    const failure = describeFailure(err, fromFlags, label, json ? 'en' : language);
    // A reader that has gone (`| head -1`) wants nothing more: silence, as Unix tools keep.
    if (!(err instanceof OutputError && err.code === 'EPIPE')) {
      // When stderr cannot be written either, the exit code is all that is left to say it.
      await stderr(report(failure, json, language)).catch(() => undefined);
    }
    return failure.exitCode;
  } finally {
    await client?.close();
  }
}

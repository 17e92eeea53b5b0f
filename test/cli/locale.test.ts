/**
 * The CLI in the operator's language (LC_ALL, LC_MESSAGES, LANG): help and errors in Russian or
 * English, while flags, exit codes and --json stay what scripts read. In process, no directory.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';

const RU = { LANG: 'ru_RU.UTF-8' };
const C = { LANG: 'C' };

function capture() {
  const out = {
    text: '',
    write(chunk: string, done: () => void) {
      out.text += chunk;
      done();
      return true;
    },
  };
  return out;
}

async function cli(argv: string[], env: Record<string, string>) {
  const stdout = capture();
  const stderr = capture();
  const code = await run(argv, { stdout, stderr, env });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('a usage error', () => {
  it('is said in Russian under ru_RU.UTF-8 and in English under C, with the same exit code', async () => {
    const ru = await cli(['frobnicate'], RU);
    expect(ru).toMatchObject({ code: 2, stdout: '' });
    expect(ru.stderr).toMatch(/^directory: неизвестная команда "frobnicate"\nкоманды: bot, server, /);
    expect(ru.stderr).toContain("подробнее: 'directory --help'");
    const en = await cli(['frobnicate'], C);
    expect(en).toMatchObject({ code: 2, stdout: '' });
    expect(en.stderr).toMatch(/^directory: unknown command "frobnicate"\ncommands: bot, server, /);
    expect(en.stderr).toContain("run 'directory --help' for details");
  });

  it("names the flag and shows the command's usage in Russian", async () => {
    const bogus = await cli(['bot', 'kerdoku', '--bogus'], RU);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^directory: неизвестный флаг --bogus /);
    expect(bogus.stderr).toContain('использование: directory bot <ref>\n');
    const missing = await cli(['stats', '--servers', '1', '--shards', '1'], {
      ...RU,
      DIRECTORY_API_VERSION: 'v2',
    });
    expect(missing.stderr).toMatch(/^directory: не указан --users\n/);
    expect(missing.stderr).toContain('использование: directory stats --servers N --shards N --users N');
    const english = await cli(['bot', 'kerdoku', '--bogus'], C);
    expect(english.stderr).toMatch(/^directory: Unknown option '--bogus'/);
  });

  it('stays English under --json, which scripts read', async () => {
    const r = await cli(['frobnicate', '--json'], RU);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toEqual({
      error: { kind: 'Usage', status: null, message: 'unknown command "frobnicate"' },
    });
  });
});

describe('a bad configuration', () => {
  it('names the flag behind it in the operator’s language, the value of a token never', async () => {
    const argv = ['bot', '1', '--timeout', 'soon', '--token', 'two words'];
    const ru = await cli(argv, RU);
    expect(ru.code).toBe(2);
    expect(ru.stderr).toContain(
      'directory: настройки заданы неверно: --token (DIRECTORY_TOKEN): нужен только токен, одним словом: внутри пробел (значение скрыто)',
    );
    expect(ru.stderr).toContain('--timeout (DIRECTORY_TIMEOUT_MS): нужно целое число от 100 до 120000');
    const en = await cli(argv, C);
    expect(en.stderr).toContain(
      'directory: invalid configuration: --token (DIRECTORY_TOKEN): expected the token',
    );
    for (const r of [ru, en]) expect(r.stderr).not.toContain('two words');
  });
});

describe('--help', () => {
  it('is in Russian under ru_RU.UTF-8, the commands, flags and variables as typed', async () => {
    const r = await cli(['--help'], RU);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('Использование: directory <команда> [аргументы] [флаги]');
    expect(r.stdout).toMatch(/^ {2}bot <ref> +показать бота \[API v3, v2, v1\]$/m);
    expect(r.stdout).toContain('--token TOKEN');
    expect(r.stdout).toContain('[DIRECTORY_TOKEN]');
    expect(r.stdout).toContain('Коды выхода:\n  0 успех\n');
    expect(r.stdout).not.toContain('Usage:');
  });

  it('is in English under C', async () => {
    const r = await cli(['--help'], C);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('Usage: directory <command> [arguments] [options]');
    expect(r.stdout).toMatch(/^ {2}bot <ref> +show a bot \[API v3, v2, v1\]$/m);
    expect(r.stdout).toContain('Exit codes:\n  0 ok\n');
  });

  it("gives a command's help and a group's in Russian", async () => {
    const links = await cli(['links', 'create', '--help'], RU);
    expect(links.stdout).toMatch(/^Использование: directory links create --code C --link URL \[флаги\]$/m);
    expect(links.stdout).toContain('Создать короткую ссылку.');
    expect(links.stdout).toMatch(/--code C +код короткой ссылки \(обязательно\)/);
    expect(links.stdout).toContain('Токен: v1/v2: токен, в v2 подходят виды: Profile');
    const group = await cli(['help', 'links'], RU);
    expect(group.stdout).toContain("Флаги подкоманды: 'directory links <подкоманда> --help'.");
    const en = await cli(['links', 'create', '--help'], C);
    expect(en.stdout).toMatch(/^Usage: directory links create --code C --link URL \[options\]$/m);
    expect(en.stdout).toMatch(/--code C +code of the short link \(required\)/);
  });
});

/**
 * A bad configuration as the operator reads it: each bad variable in one line, said in the
 * operator's language (i18n/operator.ts) and never with a secret's value.
 */
import {
  hasOperatorKey,
  type OperatorLanguage,
  type OperatorMessage,
  type OperatorParams,
  say,
} from '../i18n/operator.js';

/** One bad variable, not yet put into words: said in whichever language is asked. */
export interface ConfigProblem {
  /** The variable, e.g. DISCORD_TOKEN. */
  name: string;
  /** A key under `config.` in the operator catalogs and its values; or a text said as it is. */
  message: OperatorMessage | string;
  /** What may be shown of the value: nothing when unset, `hidden` for a secret, else it cut to 40 characters. */
  value?: { hidden: true } | { shown: string };
}

function problemText(problem: ConfigProblem | string, language: OperatorLanguage): string {
  if (typeof problem === 'string') return problem;
  const { name, message, value } = problem;
  const text = typeof message === 'string' ? message : say(language, `config.${message.key}`, message.params);
  if (value === undefined) return `${name}: ${text}`;
  const shown =
    'hidden' in value
      ? say(language, 'config.valueHidden')
      : say(language, 'config.valueGot', { value: value.shown });
  return `${name}: ${text} ${shown}`;
}

export class ConfigError extends Error {
  /** Each bad variable in one line (`NAME: what is wrong`), in the operator's language. */
  readonly problems: string[];
  readonly #problems: ReadonlyArray<ConfigProblem | string>;
  /** `problems`: each bad variable, or a line already said (`NAME: what is wrong`). */
  constructor(problems: ReadonlyArray<ConfigProblem | string>, language: OperatorLanguage = 'en') {
    const lines = problems.map((p) => problemText(p, language));
    super(`${say(language, 'config.header')}\n${lines.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = lines;
    this.#problems = problems;
  }

  /** The same lines in another language (the CLI's --json keeps English). */
  problemsIn(language: OperatorLanguage): string[] {
    return this.#problems.map((p) => problemText(p, language));
  }
}

/** A parser's key becomes a catalog message; anything else (zod's own words, another module's) stays text. */
export function messageOf(issue: {
  message: string;
  params?: Record<string, unknown>;
}): OperatorMessage | string {
  if (!/^\w+$/.test(issue.message) || !hasOperatorKey(`config.${issue.message}`)) return issue.message;
  return { key: issue.message, params: (issue.params ?? {}) as OperatorParams };
}

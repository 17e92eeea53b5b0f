/**
 * What the operator's monitoring files ask of the bot (deploy/grafana, deploy/prometheus): every
 * PromQL expression of the dashboard and of the alert rules, parsed with Prometheus's own grammar
 * (@prometheus-io/lezer-promql), and the metric names they select.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../support/bot-process.js';

export const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'directory-bot.json');
export const ALERT_RULES = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');

export interface Expression {
  /** Where it is: the panel's title or the alert's name. */
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  panels?: Panel[];
  targets?: Array<{ expr?: string }>;
}

/** The dashboard's queries, and the metrics its variables list values of. */
export function dashboardExpressions(): { expressions: Expression[]; variableMetrics: string[] } {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Panel[];
    templating: { list: Array<{ query?: string | { query?: string } }> };
  };
  const expressions: Expression[] = [];
  const visit = (panels: Panel[]): void => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) expressions.push({ where: panel.title ?? '?', expr: target.expr });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels);
  const variableMetrics = dashboard.templating.list.flatMap((variable) => {
    const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    const named = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,/.exec(query);
    return named?.[1] ? [named[1]] : [];
  });
  return { expressions, variableMetrics };
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const file = parseYaml(readFileSync(ALERT_RULES, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return file.groups.flatMap((group) => group.rules);
}

/** Grafana's own variables, as Prometheus would get them once Grafana has put them in. */
function withGrafanaVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replaceAll('$__range', '1h');
}

/**
 * The metric names an expression selects, or the first syntax error's place. Grafana's variables
 * are put in first; `$job` stands inside a quoted matcher, which PromQL takes as it is.
 */
export function selectedMetrics(expr: string): { metrics: string[]; error?: string } {
  const text = withGrafanaVariables(expr);
  const tree = parser.parse(text);
  const metrics: string[] = [];
  let error: string | undefined;
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError && error === undefined) {
      error = `syntax error at ${cursor.from}: …${text.slice(Math.max(0, cursor.from - 20), cursor.from + 20)}…`;
    }
    if (cursor.name === 'VectorSelector') {
      const selector = cursor.node.getChild('Identifier');
      if (selector) metrics.push(text.slice(selector.from, selector.to));
    }
  } while (cursor.next());
  return { metrics, ...(error === undefined ? {} : { error }) };
}

/**
 * The series names a /metrics text can have: each family of its `# TYPE` lines, a histogram's
 * and a summary's with their suffixes.
 */
export function exposedSeries(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const line of metricsText.split('\n')) {
    const typed = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line);
    if (!typed?.[1]) continue;
    const [, name, type] = typed;
    names.add(name);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** Written by Prometheus itself for each target, never by the bot. */
export const PROMETHEUS_OWN = new Set(['up']);

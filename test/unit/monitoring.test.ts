/**
 * The operator's monitoring files (deploy/grafana/directory-bot.json, deploy/prometheus/alerts.yml):
 * every expression parses as PromQL, every rule says what it is about, and the parsing itself
 * catches a broken expression and finds what an expression selects. That every metric they use is
 * one the bot shows is checked against a running bot's /metrics (test/ops/ops-endpoint.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { alertRules, dashboardExpressions, selectedMetrics } from '../ops/monitoring.js';

describe('the monitoring files', () => {
  it('every query of the dashboard is PromQL that selects a metric', () => {
    const { expressions, variableMetrics } = dashboardExpressions();
    expect(expressions.length).toBeGreaterThanOrEqual(30);
    for (const { where, expr } of expressions) {
      const parsed = selectedMetrics(expr);
      expect(parsed.error, `${where}: ${expr}`).toBeUndefined();
      expect(parsed.metrics.length, `${where}: ${expr}`).toBeGreaterThan(0);
      expect(expr, `${where} follows the job variable`).toContain('job=~"$job"');
    }
    expect(variableMetrics).toEqual(['bot_interactions_total']);
  });

  it('every alert rule parses, names a severity and says what is wrong', () => {
    const rules = alertRules();
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'DirectoryTokenRefused',
        'RemindersLate',
        'ShardDown',
        'IdentifyBudgetLow',
        'WebhookDeliveriesRefused',
        'WebhookAnnouncementsFailing',
        'DiscordGatewayUnsteady',
      ]),
    );
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      const parsed = selectedMetrics(rule.expr);
      expect(parsed.error, `${rule.alert}: ${rule.expr}`).toBeUndefined();
      expect(parsed.metrics.length, rule.alert).toBeGreaterThan(0);
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      if (rule.for !== undefined) expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
    }
  });

  it('finds what an expression selects, and the error in a broken one', () => {
    expect(
      selectedMetrics(
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job=~"$job"}[$__rate_interval]))) / ignoring(x) b_total',
      ),
    ).toEqual({ metrics: ['a_seconds_bucket', 'b_total'] });
    expect(selectedMetrics('sum(rate(a_total[5m])').error).toMatch(/syntax error/);
    expect(selectedMetrics('sum by (le (a_total)').error).toMatch(/syntax error/);
  });
});

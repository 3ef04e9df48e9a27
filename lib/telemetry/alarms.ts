/**
 * The CloudWatch alarms that turn Sluice's alerts into pages, as data for the CDK
 * observability stack: each alert is counted in the EMF metric `alerts`, rolled up
 * by {service, alert} (emf.ts), so one alarm per alert and service watches
 * "at least one in the period". The structured log events (`event: "alert"`) carry
 * the details: which tenant, account, LiteTopic.
 */
import { ALERTS, type AlertName } from './alerts.js';

export interface AlarmSpec {
  readonly alert: AlertName;
  readonly description: string;
  /** EMF metric name and the dimensions (besides `service`) of its rollup. */
  readonly metricName: 'alerts';
  readonly dimensions: { readonly alert: AlertName };
  readonly statistic: 'Sum';
  readonly periodSeconds: number;
  /** Alarm when the sum over one period is at least this. */
  readonly threshold: number;
  readonly evaluationPeriods: number;
}

export const EMF_NAMESPACE = 'Sluice';

export const ALARMS: readonly AlarmSpec[] = (Object.keys(ALERTS) as AlertName[]).map((alert) => ({
  alert,
  description: `Sluice: ${ALERTS[alert]} (see the "alert" log events for details)`,
  metricName: 'alerts',
  dimensions: { alert },
  statistic: 'Sum',
  periodSeconds: 60,
  threshold: 1,
  evaluationPeriods: 1,
}));

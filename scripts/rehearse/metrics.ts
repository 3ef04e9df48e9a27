/**
 * What CloudWatch would see: the custom metrics the synthesized alarms and scaling policies
 * read, and the metrics a process's EMF lines define. Used by the rehearsal (on the real
 * processes' stdout) and by test/infra/metrics-contract.test.ts.
 */
export interface MetricId {
  readonly namespace: string;
  readonly name: string;
  readonly dims: Record<string, string>;
}
export interface Watched extends MetricId {
  readonly alarm: string;
}

interface TemplateLike {
  readonly stack: string;
  readonly Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

type Dims = { Name: string; Value: string }[] | undefined;
const dimsOf = (d: Dims) => Object.fromEntries((d ?? []).map((x) => [x.Name, x.Value]));

/** Every metric of `namespace` an alarm reads (step scaling policies act through alarms too). */
export function watchedMetrics(templates: Iterable<TemplateLike>, namespace: string): Watched[] {
  const out: Watched[] = [];
  for (const t of templates) {
    for (const [id, r] of Object.entries(t.Resources)) {
      if (r.Type !== 'AWS::CloudWatch::Alarm') continue;
      const p = r.Properties;
      const alarm = `${t.stack}/${id}`;
      if (typeof p.MetricName === 'string')
        out.push({ alarm, namespace: String(p.Namespace), name: p.MetricName, dims: dimsOf(p.Dimensions as Dims) });
      for (const m of (p.Metrics ?? []) as {
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: Dims } };
      }[]) {
        const metric = m.MetricStat?.Metric;
        if (metric)
          out.push({ alarm, namespace: metric.Namespace, name: metric.MetricName, dims: dimsOf(metric.Dimensions) });
      }
    }
  }
  return out.filter((w) => w.namespace === namespace);
}

/** The metrics defined by EMF documents among `lines` (other lines are ignored). */
export function emfMetrics(lines: Iterable<string>): MetricId[] {
  const out: MetricId[] = [];
  for (const line of lines) {
    // CloudWatch extracts a log event that is one JSON document, nothing before it.
    if (!line.startsWith('{') || !line.includes('"_aws"')) continue;
    let doc: Record<string, unknown> & {
      _aws?: { CloudWatchMetrics?: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    try {
      doc = JSON.parse(line) as typeof doc;
    } catch {
      continue;
    }
    for (const d of doc._aws?.CloudWatchMetrics ?? []) {
      for (const set of d.Dimensions) {
        const dims = Object.fromEntries(set.map((k) => [k, String(doc[k])]));
        for (const m of d.Metrics) if (m.Name in doc) out.push({ namespace: d.Namespace, name: m.Name, dims });
      }
    }
  }
  return out;
}

export function sameMetric(a: MetricId, b: MetricId): boolean {
  const key = (d: Record<string, string>) => JSON.stringify(Object.entries(d).sort(([x], [y]) => x.localeCompare(y)));
  return a.namespace === b.namespace && a.name === b.name && key(a.dims) === key(b.dims);
}

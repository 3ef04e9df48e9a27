// The package ships no types; this is the shape its parser returns (README of parse-prometheus-text-format 1.1).
declare module 'parse-prometheus-text-format' {
  type Labels = Record<string, string>;
  type Sample =
    | { value: string; labels?: Labels }
    | { buckets: Record<string, string>; count: string; sum: string; labels?: Labels };
  interface Family {
    name: string;
    help: string;
    type: string;
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}

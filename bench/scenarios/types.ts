import type { Comparison } from '../lib/compare.js';
import type { EngineName, LabEngine } from '../lib/engine.js';
import type { TraceEvent } from '../lib/trace.js';

export interface ScenarioContext {
  readonly seed: number;
  /** `full` is the scenario as documented; `small` is the scaled-down version the tests run. */
  readonly size: 'full' | 'small';
  /** A user trace (--trace file.jsonl), for scenarios that replay one. */
  readonly trace?: readonly TraceEvent[];
  /** Scenario-specific flags, e.g. --gpu-slots. */
  readonly flags: Readonly<Record<string, string>>;
  /** Progress lines (stderr in the CLI). */
  readonly log: (line: string) => void;
  /** What Sluice runs on; default the embedded engine. */
  readonly engine?: LabEngine;
}

export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

export interface ScenarioOutput {
  readonly scenario: string;
  readonly seed: number;
  readonly size: ScenarioContext['size'];
  /** What was run, in numbers: every parameter a reader needs to judge the figures. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The figures the scenario exists to show; printed last as one JSON line. */
  readonly headline: Readonly<Record<string, number | string | boolean | null>>;
  readonly tables: readonly Table[];
  /** Everything else worth keeping (written to the JSON report). */
  readonly details: Readonly<Record<string, unknown>>;
  /** Present for scenarios replaying a trace through both systems: the chart is drawn from it. */
  readonly comparison?: Comparison;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** Engines the scenario can run on; default embedded only. */
  readonly engines?: readonly EngineName[];
  run(ctx: ScenarioContext): Promise<ScenarioOutput>;
}

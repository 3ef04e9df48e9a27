import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { buildApp } from '../../infra/app.ts';
import { REPO_ROOT } from '../../infra/sluice.ts';
import type { SluiceStacks } from '../../infra/sluice.ts';

export { REPO_ROOT };

/** The context of cdk.json, so in-process synthesis sees the same feature flags as the CLI. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface Synthesized {
  readonly app: App;
  readonly stacks: SluiceStacks;
  readonly assembly: CloudAssembly;
  readonly outdir: string;
  template(stack: keyof SluiceStacks): Template;
  /** Removes the output directory. */
  cleanup(): void;
}

/**
 * Synthesizes the whole app in-process (cdk-nag included) with cdk.json's context plus
 * `context`. `bundle: false` skips asset bundling (esbuild) for faster variants.
 */
export function synthesize(context: Record<string, unknown> = {}, opts: { bundle?: boolean } = {}): Synthesized {
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'sluice-cdk-'));
  const app = new App({
    outdir,
    context: {
      ...cdkJsonContext(),
      ...(opts.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
      ...context,
    },
  });
  const stacks = buildApp(app);
  const assembly = app.synth();
  const templates = new Map<string, Template>();
  return {
    app,
    stacks,
    assembly,
    outdir,
    cleanup: () => rmSync(outdir, { recursive: true, force: true }),
    template(name) {
      const stack = stacks[name];
      if (!stack) throw new Error(`no ${name} stack`);
      let t = templates.get(name);
      if (!t) {
        t = Template.fromJSON(assembly.getStackByName(stack.stackName).template as Record<string, unknown>);
        templates.set(name, t);
      }
      return t;
    },
  };
}

export interface ValidationReport {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[];
    suppressedViolations?: { ruleName: string; acknowledgedId: string; reason: string; acknowledgedAt: string }[];
  }[];
}

export function validationReport(outdir: string): ValidationReport {
  return JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as ValidationReport;
}

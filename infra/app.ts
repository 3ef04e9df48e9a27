/**
 * Builds the CDK app: every stack of one region, cdk-nag's AwsSolutions checks and
 * their reviewed suppressions. `infra/main.ts` runs it (via `cdk.json`); tests call it
 * in-process. Everything comes from context; see infra/config.ts and infra/README.md.
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext } from './config.ts';
import { applySuppressions } from './nag.ts';
import { addSluice } from './sluice.ts';

export function buildApp(app: App): ReturnType<typeof addSluice> {
  const cfg = configFromContext((k) => app.node.tryGetContext(k) as unknown);
  const stacks = addSluice(app, cfg);
  applySuppressions(stacks);
  if (app.node.tryGetContext('nag') !== 'false')
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stacks;
}

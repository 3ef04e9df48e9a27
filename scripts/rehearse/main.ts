/**
 * npm run rehearse [-- --edge-asset <index.mjs>] [--cdk-out <dir>]
 * Exit 0 when every check passed. See scripts/rehearse/rehearse.ts.
 */
import { parseArgs } from 'node:util';
import { REPO_ROOT, rehearse } from './rehearse.ts';

const { values } = parseArgs({ options: { 'edge-asset': { type: 'string' }, 'cdk-out': { type: 'string' } } });
const t0 = performance.now();
const report = await rehearse({
  repoRoot: REPO_ROOT,
  edgeAsset: values['edge-asset'],
  cdkOut: values['cdk-out'],
  log: (line) => console.log(`[rehearse +${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`),
});
const failed = report.checks.filter((c) => !c.ok);
console.log(`\nrehearsal: ${report.checks.length - failed.length}/${report.checks.length} checks passed${failed.length ? `; failed: ${failed.map((c) => c.name).join(', ')}` : ''}`);
process.exit(report.ok ? 0 : 1);

/**
 * npm run rehearse [-- --layout default|brokerPublicTls] [--edge-asset <index.mjs>] [--cdk-out <dir>]
 * Rehearses every layout unless one is named; exit 0 when every check passed. See scripts/rehearse/rehearse.ts.
 */
import { parseArgs } from 'node:util';
import { LAYOUTS, REPO_ROOT, rehearse, type Layout } from './rehearse.ts';

const { values } = parseArgs({
  options: { layout: { type: 'string' }, 'edge-asset': { type: 'string' }, 'cdk-out': { type: 'string' } },
});
const layouts = values.layout ? [values.layout as Layout] : LAYOUTS;
for (const l of layouts) if (!LAYOUTS.includes(l)) throw new Error(`--layout ${l}: one of ${LAYOUTS.join(', ')}`);
if (values['cdk-out'] && layouts.length > 1)
  throw new Error('--cdk-out is one synthesized layout: name it with --layout');
const t0 = performance.now();
const failed: string[] = [];
let total = 0;
for (const layout of layouts) {
  const report = await rehearse({
    repoRoot: REPO_ROOT,
    layout,
    edgeAsset: values['edge-asset'],
    cdkOut: values['cdk-out'],
    log: (line) => console.log(`[rehearse ${layout} +${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`),
  });
  total += report.checks.length;
  failed.push(...report.checks.filter((c) => !c.ok).map((c) => `${layout}: ${c.name}`));
  if (!report.ok && report.checks.every((c) => c.ok)) failed.push(`${layout}: no checks ran`);
}
console.log(
  `\nrehearsal (${layouts.join(', ')}): ${total - failed.length}/${total} checks passed${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
);
process.exit(failed.length === 0 ? 0 : 1);

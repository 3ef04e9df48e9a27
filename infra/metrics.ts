/**
 * The custom CloudWatch metrics the infrastructure scales and alarms on, from the module of
 * names the runtime uses too (functions/runtime/contract.ts). test/infra/metrics-contract.test.ts
 * checks every alarm and scaling policy against what the edge and the dispatchers emit.
 */
export { METRICS, SLUICE_NAMESPACE } from '../functions/runtime/contract.ts';

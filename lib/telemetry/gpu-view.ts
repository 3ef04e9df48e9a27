/** GPU slots in use per model and tier, set against each tier's reserved share: one process's or the deployment's. */
import { gateFromShares } from '../limits/capacity-gate.js';
import { own } from '../lookup.js';
import type { Policy } from '../policy/schema.js';

export interface GpuRow {
  readonly model: string;
  readonly capacity: number;
  readonly paceFactor: number;
  readonly tiers: { tier: string; inUse: number; reserved: number }[];
}

export function gpuRows(
  policy: Policy,
  inUse: ReadonlyMap<string, ReadonlyMap<string, number>>,
  pace: ReadonlyMap<string, number>,
  /** Slots read from the model servers' metrics, where they replace the policy's. */
  slotsRead: ReadonlyMap<string, number> = new Map(),
): GpuRow[] {
  const shares = Object.fromEntries(
    Object.entries(policy.tiers).map(([name, t]) => [name, { share: t.share, lendable: t.lendable }]),
  );
  return Object.entries(policy.models).map(([model, m]) => {
    const capacity = m.saturation ? (slotsRead.get(model) ?? m.slots) : m.slots;
    const gate = gateFromShares(capacity, shares);
    const used = inUse.get(model) ?? new Map<string, number>();
    const tiers = new Set([...Object.keys(gate.tiers), ...used.keys()]);
    return {
      model,
      capacity,
      paceFactor: pace.get(model) ?? 1,
      tiers: [...tiers].map((tier) => ({
        tier,
        inUse: used.get(tier) ?? 0,
        reserved: own(gate.tiers, tier)?.reserved ?? 0,
      })),
    };
  });
}

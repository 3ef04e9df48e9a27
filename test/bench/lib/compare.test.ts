import { describe, expect, it } from 'vitest';
import { deliveriesPerCompleted, type SystemReport } from '../../../bench/lib/compare.js';

const report = (extra: Partial<SystemReport>): SystemReport =>
  ({ total: { sent: 100, ok: 80 }, ...extra }) as unknown as SystemReport;

describe('deliveriesPerCompleted', () => {
  it("counts the embedded engine's deliveries", () => {
    expect(deliveriesPerCompleted(report({ queue: { liteTopics: 1, deadLettered: 0, delivered: 120 } }))).toBe(1.5);
  });

  it("counts the dispatcher's deliveries on the real engine, which has no queue figures", () => {
    expect(deliveriesPerCompleted(report({ dispatch: { delivered: 200, completed: 80 } }))).toBe(2.5);
  });

  it("counts a baseline's attempts, and nothing served as 0", () => {
    expect(deliveriesPerCompleted(report({}))).toBe(1.25);
    expect(deliveriesPerCompleted({ total: { sent: 5, ok: 0 } } as unknown as SystemReport)).toBe(0);
  });
});

/**
 * The lab's chart, as a self-contained SVG (no dependencies): the strongest baseline
 * (hard limiter + priority engine queue, baselines.ts) on the left, Sluice on the
 * right, the same scales on both sides. One row per tier with admitted, completed
 * and refused requests per second over time; a row with the queued requests per
 * tier (waiting to start on the GPU) and GPU utilization; and queue-wait
 * percentiles per tier.
 */
import type { Comparison, SystemReport } from './compare.js';

const W = 460;
const H = 130;
const PAD = { l: 46, r: 10, t: 22, b: 22 };
const GAP = 30;
const COLORS = { admitted: '#2563eb', completed: '#16a34a', rejected: '#dc2626', util: '#6b7280' };
const TIER_COLORS = ['#7c3aed', '#ea580c', '#0891b2', '#be185d', '#4d7c0f'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (x: number) =>
  x >= 1000
    ? `${(x / 1000).toFixed(x >= 10_000 ? 0 : 1)}k`
    : x >= 10
      ? x.toFixed(0)
      : x >= 1
        ? x.toFixed(1)
        : x.toFixed(2);

/** Grid divisions that give round tick values for a niceMax value. */
function divisions(max: number): number {
  const m = Math.round(max / 10 ** Math.floor(Math.log10(max)));
  return m === 2 ? 4 : 5;
}

function niceMax(x: number): number {
  if (x <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

interface Line {
  readonly values: readonly number[];
  readonly color: string;
  readonly dash?: boolean;
}

function panel(
  x0: number,
  y0: number,
  title: string,
  t: readonly number[],
  lines: readonly Line[],
  yMax: number,
  yLabel: string,
  xMaxMs: number,
): string {
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const sx = (ms: number) => x0 + PAD.l + (ms / xMaxMs) * iw;
  const sy = (v: number) => y0 + PAD.t + ih - (Math.min(v, yMax) / yMax) * ih;
  const out: string[] = [];
  out.push(`<rect x="${x0 + PAD.l}" y="${y0 + PAD.t}" width="${iw}" height="${ih}" fill="#fafafa" stroke="#d4d4d4"/>`);
  out.push(`<text x="${x0 + PAD.l}" y="${y0 + 14}" font-size="12" font-weight="600">${esc(title)}</text>`);
  const d = divisions(yMax);
  for (let i = 0; i <= d; i++) {
    const v = (yMax * i) / d;
    out.push(`<line x1="${x0 + PAD.l}" x2="${x0 + PAD.l + iw}" y1="${sy(v)}" y2="${sy(v)}" stroke="#e5e5e5"/>`);
    out.push(
      `<text x="${x0 + PAD.l - 4}" y="${sy(v) + 3}" font-size="9" text-anchor="end" fill="#525252">${fmt(v)}</text>`,
    );
  }
  out.push(
    `<text x="${x0 + 10}" y="${y0 + PAD.t + ih / 2}" font-size="9" fill="#525252" transform="rotate(-90 ${x0 + 10} ${y0 + PAD.t + ih / 2})" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  const step = niceMax(xMaxMs / 6);
  for (let ms = 0; ms <= xMaxMs; ms += step) {
    out.push(
      `<text x="${sx(ms)}" y="${y0 + H - 8}" font-size="9" text-anchor="middle" fill="#525252">${Math.round(ms / 1000)} s</text>`,
    );
  }
  for (const line of lines) {
    if (line.values.length === 0) continue;
    const bucket = t.length > 1 ? t[1]! - t[0]! : xMaxMs;
    const pts = line.values.map((v, i) => `${sx(t[i]! + bucket / 2).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
    out.push(
      `<polyline points="${pts}" fill="none" stroke="${line.color}" stroke-width="1.5"${line.dash ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
  }
  return out.join('\n');
}

function legend(x: number, y: number, items: readonly [string, string, boolean?][]): string {
  let cx = x;
  const out: string[] = [];
  for (const [label, color, dash] of items) {
    out.push(
      `<line x1="${cx}" x2="${cx + 18}" y1="${y - 4}" y2="${y - 4}" stroke="${color}" stroke-width="2"${dash ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    out.push(`<text x="${cx + 22}" y="${y}" font-size="11">${esc(label)}</text>`);
    cx += 30 + label.length * 6.2;
  }
  return out.join('\n');
}

export function comparisonSvg(c: Comparison, title: string): string {
  const tiers = c.world.tiers;
  const systems: [string, SystemReport][] = [
    ['baseline: limiter + priority engine queue', c.baselines.priority],
    ['Sluice', c.sluice],
  ];
  const perSec = (xs: readonly number[], bucketMs: number) => xs.map((x) => x / (bucketMs / 1000));
  const xMaxMs = Math.max(...systems.map(([, r]) => r.series.t.length * r.series.bucketMs));
  const parts: string[] = [];
  let y = 50;

  for (const tier of tiers) {
    const max = niceMax(
      Math.max(
        ...systems.flatMap(([, r]) => {
          const s = r.series.tiers[tier]!;
          return [
            ...perSec(s.admitted, r.series.bucketMs),
            ...perSec(s.completed, r.series.bucketMs),
            ...perSec(s.rejected, r.series.bucketMs),
          ];
        }),
      ),
    );
    systems.forEach(([name, r], i) => {
      const s = r.series.tiers[tier]!;
      parts.push(
        panel(
          i * (W + GAP),
          y,
          `${name}: ${tier}`,
          r.series.t,
          [
            { values: perSec(s.admitted, r.series.bucketMs), color: COLORS.admitted },
            { values: perSec(s.completed, r.series.bucketMs), color: COLORS.completed },
            { values: perSec(s.rejected, r.series.bucketMs), color: COLORS.rejected },
          ],
          max,
          'requests / s',
          xMaxMs,
        ),
      );
    });
    y += H + 8;
  }

  const qMax = niceMax(
    Math.max(1, ...systems.flatMap(([, r]) => tiers.flatMap((tier) => r.series.tiers[tier]!.queued))),
  );
  systems.forEach(([name, r], i) => {
    parts.push(
      panel(
        i * (W + GAP),
        y,
        `${name}: queued (waiting for the GPU)`,
        r.series.t,
        tiers.map((tier, k) => ({ values: r.series.tiers[tier]!.queued, color: TIER_COLORS[k % TIER_COLORS.length]! })),
        qMax,
        'requests',
        xMaxMs,
      ),
    );
  });
  y += H + 8;
  systems.forEach(([name, r], i) => {
    parts.push(
      panel(
        i * (W + GAP),
        y,
        `${name}: GPU utilization`,
        r.series.t,
        [{ values: r.series.gpuUtilization.map((u) => u * 100), color: COLORS.util }],
        100,
        '% of slots',
        xMaxMs,
      ),
    );
  });
  y += H + 8;

  // Queue wait percentiles per tier, both systems, on one log-free scale.
  const waitMax = niceMax(Math.max(1, ...systems.flatMap(([, r]) => tiers.map((tier) => r.tiers[tier]!.waitMs.p99))));
  const bw = 2 * W + GAP;
  const bh = 150;
  parts.push(
    `<text x="${PAD.l}" y="${y + 14}" font-size="12" font-weight="600">wait before the GPU starts a request (p50 / p90 / p99), per tier</text>`,
  );
  const iw = bw - PAD.l - PAD.r;
  const ih = bh - PAD.t - PAD.b;
  const sy = (v: number) => y + PAD.t + ih - (v / waitMax) * ih;
  parts.push(`<rect x="${PAD.l}" y="${y + PAD.t}" width="${iw}" height="${ih}" fill="#fafafa" stroke="#d4d4d4"/>`);
  for (let i = 0, d = divisions(waitMax); i <= d; i++) {
    const v = (waitMax * i) / d;
    parts.push(
      `<text x="${PAD.l - 4}" y="${sy(v) + 3}" font-size="9" text-anchor="end" fill="#525252">${fmt(v / 1000)} s</text>`,
    );
    parts.push(`<line x1="${PAD.l}" x2="${PAD.l + iw}" y1="${sy(v)}" y2="${sy(v)}" stroke="#e5e5e5"/>`);
  }
  const groups = tiers.length * 2;
  const gw = iw / groups;
  tiers.forEach((tier, ti) => {
    systems.forEach(([name, r], si) => {
      const w = r.tiers[tier]!.waitMs;
      const gx = PAD.l + (ti * 2 + si) * gw;
      const bars: [string, number, string][] = [
        ['p50', w.p50, '#93c5fd'],
        ['p90', w.p90, '#3b82f6'],
        ['p99', w.p99, '#1e3a8a'],
      ];
      bars.forEach(([label, v, color], k) => {
        const x = gx + gw * 0.15 + k * gw * 0.23;
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${sy(v).toFixed(1)}" width="${(gw * 0.2).toFixed(1)}" height="${(y + PAD.t + ih - sy(v)).toFixed(1)}" fill="${color}"><title>${esc(`${name} ${tier} ${label}: ${v} ms`)}</title></rect>`,
        );
      });
      parts.push(
        `<text x="${(gx + gw / 2).toFixed(1)}" y="${y + bh - 8}" font-size="9" text-anchor="middle">${esc(`${tier} · ${si === 0 ? 'priority baseline' : 'Sluice'}`)}</text>`,
      );
    });
  });
  y += bh + 10;

  const width = 2 * W + GAP;
  const head = [
    `<text x="${PAD.l}" y="18" font-size="14" font-weight="700">${esc(title)}</text>`,
    legend(PAD.l, 38, [
      ['admitted / s', COLORS.admitted],
      ['completed / s', COLORS.completed],
      ['refused / s', COLORS.rejected],
      ...tiers.map((tier, k): [string, string] => [`queued: ${tier}`, TIER_COLORS[k % TIER_COLORS.length]!]),
    ]),
  ];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${head.join('\n')}\n${parts.join('\n')}\n</svg>\n`;
}

/** A bar chart for scenarios without a trace comparison (isolation, scale). */
export function barsSvg(
  title: string,
  groups: readonly { label: string; bars: readonly { label: string; value: number; color: string }[] }[],
  unit: string,
): string {
  const width = 2 * W + GAP;
  const bh = 220;
  const iw = width - PAD.l - PAD.r;
  const ih = bh - PAD.t - PAD.b - 14;
  const max = niceMax(Math.max(1, ...groups.flatMap((g) => g.bars.map((b) => b.value))));
  const y0 = 30;
  const sy = (v: number) => y0 + PAD.t + ih - (v / max) * ih;
  const out: string[] = [`<text x="${PAD.l}" y="18" font-size="14" font-weight="700">${esc(title)}</text>`];
  out.push(`<rect x="${PAD.l}" y="${y0 + PAD.t}" width="${iw}" height="${ih}" fill="#fafafa" stroke="#d4d4d4"/>`);
  for (let i = 0, d = divisions(max); i <= d; i++) {
    const v = (max * i) / d;
    out.push(`<text x="${PAD.l - 4}" y="${sy(v) + 3}" font-size="9" text-anchor="end" fill="#525252">${fmt(v)}</text>`);
    out.push(`<line x1="${PAD.l}" x2="${PAD.l + iw}" y1="${sy(v)}" y2="${sy(v)}" stroke="#e5e5e5"/>`);
  }
  out.push(
    `<text x="12" y="${y0 + PAD.t + ih / 2}" font-size="9" fill="#525252" transform="rotate(-90 12 ${y0 + PAD.t + ih / 2})" text-anchor="middle">${esc(unit)}</text>`,
  );
  const gw = iw / Math.max(1, groups.length);
  groups.forEach((g, gi) => {
    const n = g.bars.length;
    g.bars.forEach((b, k) => {
      const x = PAD.l + gi * gw + gw * 0.1 + (k * gw * 0.8) / n;
      const w = (gw * 0.8) / n - 4;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${sy(b.value).toFixed(1)}" width="${w.toFixed(1)}" height="${(y0 + PAD.t + ih - sy(b.value)).toFixed(1)}" fill="${b.color}"><title>${esc(`${g.label} ${b.label}: ${b.value}`)}</title></rect>`,
      );
      out.push(
        `<text x="${(x + w / 2).toFixed(1)}" y="${(sy(b.value) - 3).toFixed(1)}" font-size="9" text-anchor="middle">${fmt(b.value)}</text>`,
      );
      out.push(
        `<text x="${(x + w / 2).toFixed(1)}" y="${y0 + PAD.t + ih + 12}" font-size="9" text-anchor="middle">${esc(b.label)}</text>`,
      );
    });
    out.push(
      `<text x="${(PAD.l + gi * gw + gw / 2).toFixed(1)}" y="${y0 + PAD.t + ih + 26}" font-size="11" font-weight="600" text-anchor="middle">${esc(g.label)}</text>`,
    );
  });
  const height = y0 + bh + 12;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${out.join('\n')}\n</svg>\n`;
}

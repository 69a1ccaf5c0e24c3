// Percentiles of a handful of latencies, and how they print.

/** Nearest-rank percentile (`p` in 0–100) of `values`; 0 for none. With fewer than 100 values p99 is the maximum. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

export interface Spread {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : 0,
  };
}

export const ms = (value: number) => `${value.toFixed(0)} ms`;

export function describeSpread(s: Spread): string {
  return `n=${s.n} p50 ${ms(s.p50)} p99 ${ms(s.p99)} max ${ms(s.max)}`;
}

/** `{200: 10, 429: 3}` as `200×10, 429×3`, keys in order. */
export function describeCounts(counts: ReadonlyMap<string, number>): string {
  return (
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([what, n]) => `${what}×${n}`)
      .join(', ') || 'none'
  );
}

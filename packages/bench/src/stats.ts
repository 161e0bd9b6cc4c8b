// Order statistics over timing samples (nearest-rank, so every figure is a measured sample).

/** The q-quantile (0 < q ≤ 1) of the samples by nearest rank; NaN for no samples. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

export function p95(samples: readonly number[]): number {
  return quantile(samples, 0.95);
}

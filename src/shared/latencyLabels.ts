/**
 * Latency as the views write it (the turn list, the Tokens table, the compare view): short, and the same everywhere.
 * Units are not translated (ms, s, min are what every locale's tools print).
 */

/** "850 ms", "4.2 s", "2 min 5 s". */
export function latencyLabel(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A difference against a baseline: "+1.3 s", "−420 ms", "±0 ms" (a true minus sign, so it reads as one). */
export function latencyDeltaLabel(deltaMs: number): string {
  if (Math.round(deltaMs) === 0) return '±0 ms';
  return `${deltaMs > 0 ? '+' : '\u2212'}${latencyLabel(Math.abs(deltaMs))}`;
}

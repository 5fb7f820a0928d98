import { checkLimitArgument } from './argumentChecks';
import { InvalidArgumentError } from '../errors';
import type { SessionSettings } from '../types';

const KNOWN = new Set(['limit']);

/** Python's string order: by code point (JS's default sort compares UTF-16 units, which differs for astral text). */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

/**
 * Validates session settings as Python's `SessionSettings` does: unknown keys are an error. `limit` must be an
 * integer, null or undefined (spec §12 i).
 */
export function checkSessionSettings(settings: SessionSettings | null | undefined): SessionSettings {
  if (settings == null) return { limit: null };
  const unknown = Object.keys(settings)
    .filter((k) => !KNOWN.has(k))
    .sort(byCodePoint);
  if (unknown.length > 0) throw new InvalidArgumentError(`Unknown session settings: ${unknown.join(', ')}`);
  return { limit: checkLimitArgument('sessionSettings.limit', settings.limit) };
}

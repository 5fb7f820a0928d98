import { InvalidArgumentError } from './errors';
import type { SessionSettings } from './types';

const KNOWN = new Set(['limit']);

/** Validates session settings as Python's `SessionSettings` does: unknown keys are an error. */
export function checkSessionSettings(settings: SessionSettings | null | undefined): SessionSettings {
  if (settings == null) return { limit: null };
  const unknown = Object.keys(settings).filter((k) => !KNOWN.has(k)).sort();
  if (unknown.length > 0) throw new InvalidArgumentError(`Unknown session settings: ${unknown.join(', ')}`);
  return { limit: settings.limit ?? null };
}

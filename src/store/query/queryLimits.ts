/**
 * How big an answer may grow. A model reads every character it is given and pays for it in context, so every answer
 * is bounded by default (under 20,000 characters, a few turns, a few hits) and says how to ask for the rest; a caller
 * may ask for more, up to the ceilings here.
 */

/** Characters of an answer's body by default (its header and the continuation line come on top, a few hundred). */
export const DEFAULT_MAX_CHARS = 18_000;
/** The most a caller may ask for in one answer. */
export const MAX_MAX_CHARS = 100_000;

export const DEFAULT_MAX_TURNS = 5;
export const MAX_MAX_TURNS = 100;

export const DEFAULT_MAX_HITS = 20;
export const MAX_MAX_HITS = 200;
/** The most hits a continued search skips: each skipped hit is found again by the scan (it keeps no cursor). */
export const MAX_AFTER_HIT = 100_000;

export const DEFAULT_MAX_SESSIONS = 50;
export const MAX_MAX_SESSIONS = 500;

export const DEFAULT_MAX_ROWS = 50;
export const MAX_MAX_ROWS = 1000;

export const DEFAULT_MAX_SPANS = 100;
export const MAX_MAX_SPANS = 2000;

/**
 * Collects an answer's blocks until the next would pass the limit. The first block is always taken (cut at the limit
 * when it alone is longer), so an answer never comes back empty because one turn is huge.
 */
export class TextBudget {
  private readonly parts: string[] = [];
  private used = 0;
  /** Characters of the first block left out when it alone passed the limit (0 otherwise). */
  cutChars = 0;

  constructor(readonly maxChars: number) {}

  get length(): number {
    return this.used;
  }

  get blocks(): number {
    return this.parts.length;
  }

  /** Adds `text` when it fits; false when it does not (then nothing was added, unless it was the first block). */
  add(text: string): boolean {
    if (this.used + text.length <= this.maxChars) {
      this.parts.push(text);
      this.used += text.length;
      return true;
    }
    if (this.parts.length > 0) return false;
    this.parts.push(text.slice(0, this.maxChars));
    this.cutChars = text.length - this.maxChars;
    this.used = this.maxChars;
    return true;
  }

  text(): string {
    return this.parts.join('');
  }
}

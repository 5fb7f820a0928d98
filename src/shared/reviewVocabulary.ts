/**
 * The words of review data both sides use: verdicts, the default tags, pairwise outcomes. The store's types
 * (src/store/reviews/reviewTypes.ts) are these; the webview cannot import the store, so they live here.
 */
export type Verdict = 'good' | 'bad';
export const VERDICTS: readonly Verdict[] = ['good', 'bad'];

/** The tags offered before the user makes any of their own. */
export const DEFAULT_TAGS: readonly string[] = ['wrong-tool', 'hallucination', 'refused', 'too-slow', 'too-costly'];

/** Pairwise outcomes: which side of two compared turns was better. */
export type PairwiseOutcome = 'left' | 'right' | 'tie' | 'both-bad';
export const PAIRWISE_OUTCOMES: readonly PairwiseOutcome[] = ['left', 'right', 'tie', 'both-bad'];

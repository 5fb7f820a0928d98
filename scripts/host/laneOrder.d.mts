// Types for laneOrder.mjs (plain JavaScript so scripts/test.mjs runs it without a build).

/** What `waitsInLane` reads of a phase. */
export interface LanePhase {
  name: string;
  lane?: string;
  /** Undefined while its installs run; null when they are done; the reason when one failed. */
  installFailure?: string | null;
}

/** Whether `phase` must wait for an earlier phase of its lane that has not started and whose installs are done. */
export function waitsInLane(phase: LanePhase, selected: readonly LanePhase[], state: (name: string) => string | undefined): boolean;

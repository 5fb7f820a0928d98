/** A session of an open database: what branch actions, panels and the current-branch map are keyed by. */
export interface SessionRef {
  dbPath: string;
  sessionId: string;
}

/** A branch of a session: what runs, comparisons and branch actions act on. */
export interface BranchRef extends SessionRef {
  branchId: string;
}

/** One map key per (database, session); JSON, so no path or id can make two sessions collide. */
export function sessionKey(dbPath: string, sessionId: string): string {
  return JSON.stringify([dbPath, sessionId]);
}

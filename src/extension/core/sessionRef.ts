/** A session of an open database: what branch actions, panels and the current-branch map are keyed by. */
export interface SessionRef {
  dbPath: string;
  sessionId: string;
}

/** One map key per (database, session); JSON, so no path or id can make two sessions collide. */
export function sessionKey(dbPath: string, sessionId: string): string {
  return JSON.stringify([dbPath, sessionId]);
}

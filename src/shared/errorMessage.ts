/**
 * The text of anything thrown: an `Error`'s message (or its stack, for logs), anything else as a string. Pure, so
 * the host, the agent runner and the webview share it (the store, which may not import src/shared, keeps its own).
 */
export function errorMessage(err: unknown, options: { stack?: boolean } = {}): string {
  if (err instanceof Error) return options.stack ? (err.stack ?? err.message) : err.message;
  return String(err);
}

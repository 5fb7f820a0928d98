/**
 * Addresses of server-backed stores: the password never stays in one. It is split off when the user enters the
 * address and kept in VS Code's secret storage under a key derived from the address without it.
 */

/** The address without its password, and the password (undefined when the address has none). */
export function splitPassword(url: string): { address: string; password: string | undefined } {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return { address: url.trim(), password: undefined };
  }
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  u.password = '';
  // `redis://:pass@host` leaves `redis://@host` behind; drop the empty credentials.
  const address = u.toString().replace(/^([a-z]+:\/\/)@/i, '$1');
  return { address, password };
}

/** The secret storage key of a store's password. */
export function passwordKey(address: string): string {
  return `agentSessions.storePassword:${address}`;
}

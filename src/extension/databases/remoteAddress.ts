/**
 * Addresses of server-backed stores: the password never stays in one. It is split off when the user enters the
 * address (or when a remembered address from an older version still holds one) and kept in VS Code's secret storage
 * under a key derived from the address without it. `splitPassword` is the one owner of "the address without its
 * secret": the registry's entries, the workspace state, the tree's labels and tooltips, the MCP server definitions
 * and the prompts handed to the chat all hold what it returns.
 */
import * as l10n from '@vscode/l10n';
import { credentialsUnclear, passwordEndsAddress, redactUrl } from '../../store/remote/remoteErrors';
import { UserFacingError } from '../core/userError';

/**
 * The query parameter both drivers read a password from: pg (pg-connection-string copies every parameter into the
 * connection's config, where `password` wins over the address's `user:pass@`) and ioredis (parameters fill what the
 * address's `user:pass@` left unset). Matched exactly, as the drivers match it.
 */
const PASSWORD_PARAM = 'password';

/**
 * The address without its password — neither `user:pass@` nor `?password=` — and the password its driver would have
 * used (undefined when the address has none): for PostgreSQL the last `password` parameter before `user:pass@`, for
 * Redis the other way round, as pg and ioredis read them. An empty password counts as none.
 */
export function splitPassword(url: string): { address: string; password: string | undefined } {
  // A password holding `/`, `?` or `#` unencoded ends the address early: no driver can read it, and no split of ours
  // would be sure to leave none of it in the address.
  if (credentialsUnclear(url.trim()))
    throw new UserFacingError(
      passwordEndsAddress(url.trim())
        ? l10n.t(
            'The password in {0} holds a character that ends an address (/, ? or #): percent-encode it (%2F, %3F, %23), or leave it out of the address to be asked for it.',
            redactUrl(url.trim()),
          )
        : l10n.t('{0} is not an address that can be read: check its host and port.', redactUrl(url.trim())),
    );
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return { address: url.trim(), password: undefined };
  }
  const inUserInfo = u.password ? decodeURIComponent(u.password) : undefined;
  const inQuery = u.searchParams.getAll(PASSWORD_PARAM).at(-1) || undefined;
  const postgres = u.protocol === 'postgres:' || u.protocol === 'postgresql:';
  const password = postgres ? (inQuery ?? inUserInfo) : (inUserInfo ?? inQuery);
  u.password = '';
  // Deleting rewrites the query from its parsed form; an address without the parameter keeps its text as it was.
  if (u.searchParams.has(PASSWORD_PARAM)) u.searchParams.delete(PASSWORD_PARAM);
  // `redis://:pass@host` leaves `redis://@host` behind; drop the empty credentials.
  const address = u.toString().replace(/^([a-z]+:\/\/)@/i, '$1');
  return { address, password };
}

/** The secret storage key of a store's password. */
export function passwordKey(address: string): string {
  return `agentSessions.storePassword:${address}`;
}

/**
 * Passwords given inside addresses, kept out of what people read: `scheme://user:password@host` is shown as
 * `scheme://user:***@host` (the user name stays: it helps to spot a wrong account), and a query parameter named like a
 * secret (`?password=`, `?sslpassword=`, `?api_key=`, `?token=`) as `?password=***`. `hideUrlPasswords` finds every
 * address in a text (a message that quotes what the user typed, or a library's error that quotes it again);
 * `urlWithoutPassword` takes one address whole.
 *
 * Read as text, never parsed: a password may hold `@`, `/`, `?`, `#` or `:` unencoded (generated ones often do), and a
 * URL parser then ends the user info, or the host, early (`user:12/34@host` parses as host `user`, port 12 and a path)
 * or fails, which would leave part of the password in the text. So the user info runs to the LAST `@` of the address,
 * and the password is everything in it after the user name's `:`. An address whose path or query holds an `@` after a
 * `:` (`http://host:8080/@scope`) loses more than its password (`http://host:***@scope`): shown too little, never a
 * password. In a text an address ends at whitespace, which no address holds unencoded (a password with a raw space is
 * cut there; `urlWithoutPassword` reads the whole string). The store's `redactUrl` (src/store/remote/remoteErrors.ts)
 * shows one server address as its driver reads it; this is for any text.
 */

/** `scheme://` and the rest of the address, up to whitespace. The scheme starts a word (`xhttp://` is one scheme). */
const ADDRESS = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)(\S*)/g;

/** A query (or fragment) parameter named like a secret, with its value. */
const SECRET_PARAM = /([?&#][^=&#\s]*(?:pass|secret|key|token)[^=&#\s]*=)[^&#\s]*/gi;

const MASK = '***';

/** Every address in `text` with its password masked (`user:***@host`); the rest of the text as it was. */
export function hideUrlPasswords(text: string): string {
  return text.replace(ADDRESS, (_match, scheme: string, rest: string) => scheme + hideSecretParams(hideUserPassword(rest)));
}

/**
 * One address with its password masked. The whole string is the address (spaces too); without `scheme://` it is read
 * from its start, so a mistyped `user:pw@host` is masked as well.
 */
export function urlWithoutPassword(url: string): string {
  const scheme = schemeOf(url);
  return scheme + hideSecretParams(hideUserPassword(url.slice(scheme.length)));
}

/**
 * Whether one address has a password in its user info, read as `urlWithoutPassword` reads it: also when a URL parser
 * would find none (`http://user:12/34@host` parses as host `user`, port 12). A secret in the query does not count.
 */
export function urlHasPassword(url: string): boolean {
  const rest = url.slice(schemeOf(url).length);
  return hideUserPassword(rest) !== rest;
}

/** `scheme://` at the start of `url` (after any whitespace), or '' when it has none. */
function schemeOf(url: string): string {
  return /^\s*[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? '';
}

/** What follows an address's `//`, its password masked: from the first `:` before the last `@` up to that `@`. */
function hideUserPassword(rest: string): string {
  const at = rest.lastIndexOf('@');
  const colon = at < 0 ? -1 : rest.indexOf(':');
  return colon >= 0 && colon < at - 1 ? `${rest.slice(0, colon + 1)}${MASK}${rest.slice(at)}` : rest;
}

function hideSecretParams(rest: string): string {
  return rest.replace(SECRET_PARAM, `$1${MASK}`);
}

/**
 * Which API key a run uses, and keeping it out of everything a user or a log sees.
 *
 * Order: the key stored with *Set API Key* (VS Code secret storage, passed in by the host) → `OPENAI_API_KEY`
 * from the environment → none. With none, a server on this machine or a private network (Ollama, vLLM, LM Studio,
 * a LAN box) gets a placeholder key, since such servers do not check it but the OpenAI client refuses to send a
 * request without one; any other server fails with a `NoApiKeyError` before a request is made.
 */
import { isIP } from 'node:net';

/** The secret-storage key under which the host keeps the user's API key. */
export const API_KEY_SECRET_ID = 'agentSessions.openaiApiKey';

/** The command the remedy names (its id is `agentSessions.setApiKey`). */
export const SET_API_KEY_REMEDY = "Run 'Agent Sessions: Set API Key'";

/**
 * Sent as the key to local servers when the user has none. Local servers ignore it; it is not a secret, and it
 * says what it is in a server's log.
 */
export const PLACEHOLDER_API_KEY = 'agent-sessions-no-key';

/** Where a resolved key came from. */
export type ApiKeySource = 'secret-storage' | 'environment' | 'placeholder';

export interface ResolvedApiKey {
  key: string;
  source: ApiKeySource;
}

/** No key is available for a server that needs one. The message names the remedy. */
export class NoApiKeyError extends Error {
  constructor(baseUrl: string | undefined) {
    super(
      `No API key is set for ${baseUrl ? describeBaseUrl(baseUrl) : 'the OpenAI API'}. ${SET_API_KEY_REMEDY}, or set OPENAI_API_KEY in the environment VS Code starts from.`,
    );
    this.name = 'NoApiKeyError';
  }
}

export interface ResolveApiKeyOptions {
  /** The key from secret storage, if any. */
  stored?: string | null;
  /** The environment to read `OPENAI_API_KEY` from; default `process.env` (tests pass their own). */
  env?: Record<string, string | undefined>;
  /** The configured base URL; undefined means the OpenAI API. */
  baseUrl?: string;
}

/** The key for a run; throws `NoApiKeyError` when there is none and the server is not local. */
export function resolveApiKey(options: ResolveApiKeyOptions): ResolvedApiKey {
  const stored = options.stored?.trim();
  if (stored) return { key: stored, source: 'secret-storage' };
  const fromEnv = (options.env ?? process.env).OPENAI_API_KEY?.trim();
  if (fromEnv) return { key: fromEnv, source: 'environment' };
  if (options.baseUrl !== undefined && isLocalBaseUrl(options.baseUrl)) return { key: PLACEHOLDER_API_KEY, source: 'placeholder' };
  throw new NoApiKeyError(options.baseUrl);
}

/**
 * True for servers on this machine or a private network: loopback, RFC 1918 and link-local IPv4, IPv6 loopback,
 * unique-local and link-local, `localhost`/`*.localhost`, mDNS `*.local`, and single-label names (a Docker
 * Compose service such as `http://ollama:11434`), which public DNS never resolves.
 */
export function isLocalBaseUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local')) return true;
  const ipVersion = isIP(host);
  if (ipVersion === 4) return isPrivateIPv4(host);
  if (ipVersion === 6) return isPrivateIPv6(host);
  return host !== '' && !host.includes('.');
}

function isPrivateIPv4(host: string): boolean {
  const [a = -1, b = -1] = host.split('.').map(Number);
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
}

function isPrivateIPv6(host: string): boolean {
  if (host === '::1') return true;
  // IPv4-mapped addresses; URL parsing writes them in hex (::ffff:c0a8:1 for 192.168.0.1).
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (dotted) return isPrivateIPv4(dotted[1] as string);
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (hex) {
    const hi = parseInt(hex[1] as string, 16);
    const lo = parseInt(hex[2] as string, 16);
    return isPrivateIPv4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  const first = parseInt(host.split(':')[0] || '0', 16);
  // fc00::/7 unique-local, fe80::/10 link-local.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80;
}

/** The base URL without credentials, query or fragment, for messages. */
export function describeBaseUrl(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return 'the configured base URL';
  }
}

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * The secrets worth redacting: short strings (the placeholder, an empty key) are not secrets, and redacting them
 * would garble messages.
 */
export function redactableSecrets(secrets: readonly (string | undefined)[]): string[] {
  return [...new Set(secrets.filter((s): s is string => s !== undefined && s.length >= 8 && s !== PLACEHOLDER_API_KEY))];
}

/**
 * Removes secrets from text meant for people or logs: every given secret verbatim, and anything shaped like a
 * credential that a library may echo (an `Authorization`/`Bearer` value, an `sk-…` key, an `api_key=` query).
 * Why the patterns as well: a server may echo a key it was sent in a form we did not produce (cut, masked, or
 * URL-encoded), and a key from another source (a user's module) is unknown to us.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of redactableSecrets(secrets)) {
    out = out.split(secret).join(REDACTED);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join(REDACTED);
  }
  return out
    .replace(/(authorization["']?\s*[:=]\s*["']?)(bearer\s+)?[^\s"',}]+/gi, `$1$2${REDACTED}`)
    .replace(/\bbearer\s+(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}/gi, `Bearer ${REDACTED}`)
    .replace(/\bsk-[A-Za-z0-9_*-]{8,}/g, REDACTED)
    .replace(/([?&](?:api[_-]?key|key|token)=)[^&\s"']+/gi, `$1${REDACTED}`);
}

/**
 * `value` with `redactSecrets` applied to every string in it, the shape kept: for what a run read back from the file
 * (its answer, its calls' arguments, a replay's diff) before it is printed, graded, reported or kept, where the text
 * the agent streamed was redacted as it came.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
  if (typeof value === 'string') return redactSecrets(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v, secrets)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, secrets);
    return out as T;
  }
  return value;
}

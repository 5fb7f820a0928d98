/**
 * Which addresses the OTLP receiver treats as this machine only, and which `Host` headers it answers: a page in the
 * user's browser can make its own name resolve to 127.0.0.1 (DNS rebinding) and post spans to a loopback receiver,
 * but its requests still carry its own name in `Host`, so a receiver that answers only its own address refuses them.
 */
import { isIP } from 'node:net';

/** Whether `host` (an address to listen on, or a `Host` header's name) reaches this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = bare(host);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || h.startsWith('::ffff:127.');
  return false;
}

/** Whether `host` is a wildcard address (every interface of the machine). */
export function isWildcardHost(host: string): boolean {
  const h = bare(host);
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/** A name or address without IPv6 brackets or a trailing dot, lower-cased (as names compare). */
function bare(host: string): string {
  return host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** A `Host` header's name and port (80 when it names none, HTTP's default); undefined when it is not one. */
export function parseHostHeader(header: string | undefined): { name: string; port: number } | undefined {
  // RFC 9112 §3.2: a request without a Host header, or with more than one, is a bad request.
  if (header === undefined || header === '') return undefined;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(header.trim());
  if (!m) return undefined;
  const port = m[2] === undefined ? 80 : Number(m[2]);
  return port > 65535 ? undefined : { name: bare(m[1]!), port };
}

/**
 * Whether a request whose `Host` header is `header` is addressed to a receiver bound to `bound.host` on `bound.port`:
 * the port must be the receiver's, and the name its own address; loopback names for a loopback receiver; for a
 * receiver on every interface (0.0.0.0, ::), which the user opened to the network, any IP address or a loopback name,
 * never a DNS name, since only a DNS name can be rebound. `allowedNames` adds names the user chose.
 */
export function hostHeaderAllowed(
  header: string | undefined,
  bound: { host: string; port: number },
  allowedNames: readonly string[] = [],
): boolean {
  const asked = parseHostHeader(header);
  if (!asked || asked.port !== bound.port) return false;
  const own = bare(bound.host);
  if (asked.name === own || allowedNames.some((n) => bare(n) === asked.name)) return true;
  if (isLoopbackHost(own)) return isLoopbackHost(asked.name);
  if (isWildcardHost(own)) return isIP(asked.name) !== 0 || isLoopbackHost(asked.name);
  return false;
}

/** The `Host` values a receiver bound to `host` on `port` answers, for the refusal's message. */
export function expectedHosts(host: string, port: number): string[] {
  const h = bare(host);
  const withPort = (name: string) => `${isIP(name) === 6 ? `[${name}]` : name}:${port}`;
  if (isLoopbackHost(h)) return [...new Set([h, '127.0.0.1', 'localhost', '::1'])].map(withPort);
  if (isWildcardHost(h)) return [`<this machine's IP address>:${port}`, withPort('localhost')];
  return [withPort(h)];
}

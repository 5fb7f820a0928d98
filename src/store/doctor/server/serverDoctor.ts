/**
 * The doctor on a server store (docs/doctor.md, "Server stores"): the same report as a session file's, read-only.
 * PostgreSQL and Redis hold Python's `SQLAlchemySession` and `RedisSession` formats, which have no branches, turns or
 * usage (format spec §15), so the kinds that apply are the ones their formats can hold: `malformed-item`,
 * `dangling-tool-call` (at the end of a session), `messages-without-session`, and on Redis `wrong-key-type`.
 * Nothing is repaired: a repair on a server would race the agents writing to it without a lock the SDKs also take.
 */
import { DEFAULT_MAX_PER_KIND, FindingSink } from '../checkContext';
import type { DoctorReport } from '../doctorReport';
import { KIND_ORDER, type FindingKind } from '../findingKinds';
import { openRemoteStore } from '../../remote/openRemoteStore';
import { PostgresStoreBrowser } from '../../remote/postgresBrowser';
import { RedisStoreBrowser } from '../../remote/redisBrowser';
import { RemoteStoreError, secretOf, translatePostgresError, translateRedisError } from '../../remote/remoteErrors';
import type { OpenRemoteStoreOptions, RemoteStoreKind } from '../../remote/remoteStore';
import { checkPostgresStore } from './postgresChecks';
import { checkRedisStore } from './redisChecks';

export interface ServerDoctorOptions extends Pick<
  OpenRemoteStoreOptions,
  'url' | 'password' | 'keyPrefix' | 'tables' | 'connectTimeoutMs' | 'queryTimeoutMs'
> {
  /** Check only this session. */
  session?: string;
  /** Findings listed per kind (the rest are counted). Default 20. */
  maxPerKind?: number;
}

/** A server store's report: `path` is the store's label (no password); repairs are never offered. */
export interface ServerDoctorReport extends DoctorReport {
  server: RemoteStoreKind;
}

export function isServerReport(report: DoctorReport): report is ServerDoctorReport {
  return 'server' in report;
}

/**
 * Checks the store at `options.url`. Throws `RemoteStoreError` for a store it cannot read (unreachable, refused
 * credentials, a missing database or table, a timeout), never with the password in its message.
 */
export async function checkServerStore(options: ServerDoctorOptions): Promise<ServerDoctorReport> {
  const browser = await openRemoteStore({ ...options, readOnly: true });
  const where = `${browser.kind === 'postgres' ? 'PostgreSQL' : 'Redis'} ${browser.label}`;
  const sink = new FindingSink(options.maxPerKind ?? DEFAULT_MAX_PER_KIND);
  const session = options.session ?? null;
  const add = sink.add.bind(sink);
  let sessionFound: boolean | undefined;
  try {
    if (browser instanceof PostgresStoreBrowser) sessionFound = await checkPostgresStore(browser, session, add);
    else if (browser instanceof RedisStoreBrowser) sessionFound = await checkRedisStore(browser, session, add);
  } catch (err) {
    if (err instanceof RemoteStoreError) throw err;
    const secret = secretOf(options.url, options.password);
    throw browser.kind === 'postgres' ? translatePostgresError(err, where, secret) : translateRedisError(err, where, secret);
  } finally {
    await browser.close();
  }
  const rank = (k: FindingKind) => KIND_ORDER.indexOf(k);
  // Stable: within a kind, the order the check found them in.
  const findings = sink.findings.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f.kind) - rank(b.f.kind) || a.i - b.i);
  return {
    path: where,
    session,
    findings: findings.map((x) => x.f),
    totals: Object.fromEntries(sink.totals),
    integrityOk: true,
    ...(sessionFound === undefined ? {} : { sessionFound }),
    server: browser.kind,
  };
}

/**
 * Child process for the read-only tests: run as root, it loads the store, then drops to `nobody` (65534) so the
 * root-owned database file is really not writable, tries to open it for writing and read-only, tries every write
 * method on the read-only session, and prints what happened as JSON on stdout.
 *
 * Usage: node --import tsx test/support/readOnlyChild.ts <dbPath>
 */
import { AdvancedSQLiteSession, SQLiteSession, SessionDatabaseError, resolveDriver } from '../../src/store';

interface Outcome {
  ok: boolean;
  value?: unknown;
  name?: string;
  problem?: string;
  message?: string;
  code?: unknown;
}

function describe(err: unknown): Outcome {
  const e = err as { name?: string; message?: string; code?: unknown; errcode?: unknown };
  return {
    ok: false,
    name: e?.name,
    problem: err instanceof SessionDatabaseError ? err.problem : undefined,
    message: e?.message,
    code: e?.code ?? e?.errcode,
  };
}

async function attempt(fn: () => unknown): Promise<Outcome> {
  try {
    const value = await fn();
    return { ok: true, value: value === undefined ? null : value };
  } catch (err) {
    return describe(err);
  }
}

async function main(): Promise<void> {
  const dbPath = process.argv[2];
  if (!dbPath) throw new Error('usage: readOnlyChild.ts <dbPath>');
  // Load the driver (and its native addon) while still privileged.
  const driver = resolveDriver();
  if (process.getuid?.() === 0 && process.setgid && process.setuid) {
    process.setgid(65534);
    process.setuid(65534);
  }
  const out: Record<string, unknown> = { driver, uid: process.getuid?.() };
  out.openForWriting = await attempt(() => {
    new AdvancedSQLiteSession({ sessionId: 's1', dbPath }).close();
  });
  out.openForWritingCreateTables = await attempt(() => {
    new AdvancedSQLiteSession({ sessionId: 's1', dbPath, createTables: true }).close();
  });
  out.plainForWriting = await attempt(() => {
    new SQLiteSession({ sessionId: 's1', dbPath }).close();
  });

  const errors: string[] = [];
  let session: AdvancedSQLiteSession | undefined;
  out.openReadOnly = await attempt(() => {
    session = new AdvancedSQLiteSession({
      sessionId: 's1',
      dbPath,
      readonly: true,
      logger: { error: (m) => void errors.push(m), warn: () => undefined },
    });
  });
  const s = session;
  if (s) {
    out.getItems = await attempt(() => s.getItems());
    out.listBranches = await attempt(async () => (await s.listBranches()).map((b) => b.branchId));
    out.writes = {
      addItems: await attempt(() => s.addItems([{ role: 'user', content: 'nope' } as never])),
      popItem: await attempt(() => s.popItem()),
      clearSession: await attempt(() => s.clearSession()),
      createBranchFromTurn: await attempt(() => s.createBranchFromTurn(1, 'x')),
      switchToBranch: await attempt(() => s.switchToBranch('main')),
      deleteBranch: await attempt(() => s.deleteBranch('alt')),
      storeRunUsage: await attempt(() => s.storeRunUsage({ state: { usage: { requests: 1 } } })),
    };
    out.usageErrors = errors;
    out.getItemsAfter = await attempt(() => s.getItems());
    s.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});

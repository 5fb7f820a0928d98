/**
 * Child process of the doctor bench (scripts/bench/doctor.ts): one measurement in a fresh process, so its peak RSS
 * is that measurement's alone, on the driver the parent forces (AGENT_SESSION_SQLITE_DRIVER) under the Node that
 * runs it. Prints one JSON line: CPU and wall time of the work (not of the process start), peak RSS, what it found.
 *
 * - `check`: `checkSessionFile` on the file, every kind, read-only (what `agent-sessions doctor FILE` does).
 * - `floor`: a full scan of the file's tables: one read-only connection, one read transaction, `SELECT *` of every
 *   table with each row handed to JS (what any reader of the whole file pays).
 *
 * Usage: node --import tsx scripts/bench/doctorRun.ts <check|floor> <file>
 */
import { openDatabase, resolveDriver } from '../../src/store';
import { checkSessionFile, findingCount } from '../../src/store/doctor/doctorReport';

const [mode, file] = process.argv.slice(2);
if ((mode !== 'check' && mode !== 'floor') || !file) throw new Error('usage: doctorRun.ts <check|floor> <file>');

function floor(path: string): number {
  const db = openDatabase(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
      .all<{ name: string }>()
      .map((r) => r.name);
    let rows = 0;
    db.exec('BEGIN');
    try {
      for (const t of tables) for (const _ of db.prepare(`SELECT * FROM "${t.replace(/"/g, '""')}"`).iterate()) rows++;
    } finally {
      db.exec('COMMIT');
    }
    return rows;
  } finally {
    db.close();
  }
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
let result: Record<string, unknown>;
if (mode === 'check') {
  const report = checkSessionFile(file);
  result = { findings: findingCount(report), integrityOk: report.integrityOk };
} else result = { rows: floor(file) };
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({
    mode,
    driver: resolveDriver(),
    node: process.version,
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    // ru_maxrss is in kilobytes on Linux.
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    ...result,
  })}\n`,
);

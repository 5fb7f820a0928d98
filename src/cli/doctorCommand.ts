/**
 * `agent-sessions doctor [file|address] [--session S] [--fix] [--backup PATH] [--json]` (docs/doctor.md): the
 * doctor's findings, one block each, and with --fix the repair (after its backup) and the re-check; a server address
 * gets the report alone. The exit code says whether anything is left: 0 clean, 1 findings, the CLI's other codes for
 * a store it cannot check or repair.
 */
import type { Finding } from '../store/doctor/checkContext';
import { findingCount, checkSessionFile, type DoctorReport } from '../store/doctor/doctorReport';
import { FINDING_KINDS, KIND_ORDER } from '../store/doctor/findingKinds';
import { repairSessionFile, type RepairOutcome } from '../store/doctor/repairs';
import { checkServerStore, isServerReport } from '../store/doctor/server/serverDoctor';
import { isServerAddress, storeAddress } from './cliStore';
import type { CommandContext } from './commands';
import { EXIT, NotFoundError, UsageError } from './exitCodes';
import { readOnlyInCliWords } from './readOnlyFile';
import { paint } from './terminal';

export interface DoctorArgs {
  session?: string;
  fix: boolean;
  backup?: string;
}

/** Runs the command and writes its output; returns the exit code. */
export async function doctorCommand(ctx: CommandContext, db: string | undefined, rest: string[], args: DoctorArgs): Promise<number> {
  if (db !== undefined && rest.length > 0) throw new UsageError('doctor takes the file once: as its argument or as --db');
  if (rest.length > 1) throw new UsageError(`doctor takes only a file (got ${rest.length} arguments)`);
  const file = storeAddress(db ?? rest[0]);
  if (isServerAddress(file)) return serverDoctorCommand(ctx, file, args);
  if (args.backup !== undefined && !args.fix) throw new UsageError('--backup goes with --fix');
  const options = args.session === undefined ? {} : { session: args.session };
  if (!args.fix) {
    const report = checkSessionFile(file, options);
    if (report.sessionFound === false) throw noSession(file, args.session!, false);
    if (ctx.json) process.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
    else await ctx.term.page(reportText(report, ctx.term.color));
    return findingCount(report) > 0 ? EXIT.error : EXIT.ok;
  }
  let outcome: RepairOutcome;
  try {
    outcome = repairSessionFile(file, { ...options, ...(args.backup === undefined ? {} : { backup: args.backup }) });
  } catch (err) {
    throw readOnlyInCliWords(err, 'Make it writable to repair it; doctor without --fix reports on it as it is.');
  }
  if (outcome.before.sessionFound === false) throw noSession(file, args.session!, outcome.journalRolledBack);
  if (ctx.json) process.stdout.write(`${JSON.stringify(outcomeJson(outcome))}\n`);
  else await ctx.term.page(outcomeText(outcome, ctx.term.color));
  return findingCount(outcome.after) > 0 ? EXIT.error : EXIT.ok;
}

/**
 * A --session the file does not hold: exit 3, as `export` and `show` say it, rather than "no findings" for what is
 * likely a slip in the id (the repair then repaired nothing).
 */
function noSession(file: string, session: string, journalRolledBack: boolean): NotFoundError {
  return new NotFoundError(
    `There is no session '${session}' in ${file}.${journalRolledBack ? ` (Its hot ${file}-journal was rolled back first; nothing else was changed.)` : ''}`,
  );
}

/**
 * `doctor` on a PostgreSQL or Redis address (docs/doctor.md, "Server stores"): the report, read-only. `--fix` and
 * `--backup` are refused before anything connects: a repair there would race the agents writing to the store without
 * a lock the SDKs take too, and a server's backups are its own tools' job.
 */
async function serverDoctorCommand(ctx: CommandContext, address: string, args: DoctorArgs): Promise<number> {
  if (args.fix || args.backup !== undefined)
    throw new UsageError(
      'server stores are checked read-only: --fix and --backup repair session files only (docs/doctor.md, "Server stores")',
    );
  const report = await checkServerStore({
    url: address,
    // As every command that opens a server: the password may stay out of the address and the shell's history.
    password: process.env.AGENT_SESSIONS_PASSWORD || undefined,
    keyPrefix: ctx.store?.keyPrefix,
    ...(args.session === undefined ? {} : { session: args.session }),
  });
  if (report.sessionFound === false) throw noSession(report.path, args.session!, false);
  if (ctx.json) process.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
  else await ctx.term.page(reportText(report, ctx.term.color));
  return findingCount(report) > 0 ? EXIT.error : EXIT.ok;
}

function whereOf(f: Finding): string {
  const parts: string[] = [];
  if (f.session !== undefined) parts.push(`session ${JSON.stringify(f.session)}`);
  if (f.branch !== undefined) parts.push(`branch ${JSON.stringify(f.branch)}`);
  if (f.turn !== undefined) parts.push(`turn ${f.turn}`);
  for (const [table, ids] of Object.entries(f.rows ?? {})) parts.push(`${table} row${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`);
  return parts.length > 0 ? parts.join(', ') : 'the whole file';
}

/** The report for people: one block per finding, then what was left unlisted, then the count. */
export function reportText(report: DoctorReport, color: boolean): string {
  const lines: string[] = [];
  for (const f of report.findings) {
    const k = FINDING_KINDS[f.kind];
    lines.push(`${paint(color, 'bold', f.kind)}: ${k.title}`);
    lines.push(`  where:    ${whereOf(f)}`);
    lines.push(`  found:    ${f.detail}`);
    lines.push(`  breaks:   ${k.breaks}`);
    if (k.upstream) lines.push(`  upstream: ${k.upstream}`);
    lines.push(`  fixed in: ${k.fixedIn}`);
    lines.push(
      `  repair:   ${repairOf(report, f) ?? (isServerReport(report) ? 'none (server stores are checked read-only)' : 'none (reported only)')}`,
    );
    lines.push('');
  }
  for (const kind of KIND_ORDER) {
    const listed = report.findings.filter((f) => f.kind === kind).length;
    const total = report.totals[kind] ?? 0;
    if (total > listed) lines.push(`… and ${total - listed} more ${kind} finding(s), not listed`);
  }
  const n = findingCount(report);
  const scope = report.session === null ? report.path : `${report.path} (session ${JSON.stringify(report.session)})`;
  if (n === 0) lines.push(`${scope}: no findings`);
  else {
    lines.push(`${scope}: ${n} finding(s)`);
    if (!report.integrityOk)
      lines.push('integrity_check failed: the other checks were not run and no repair is offered; restore a backup.');
  }
  return `${lines.join('\n')}\n`;
}

function outcomeText(o: RepairOutcome, color: boolean): string {
  const parts = [reportText(o.before, color)];
  if (o.journalRolledBack)
    parts.push(
      `Rolled back: the unfinished transaction a killed writer left in ${o.before.path}-journal (opening the file for writing did it; the checks above read its last commit).\n`,
    );
  if (o.backup === null) {
    parts.push(o.before.integrityOk ? 'Nothing to repair: no finding here has a repair.\n' : 'Not repaired: integrity_check failed.\n');
    return parts.join('\n');
  }
  const c = o.counts;
  parts.push(
    `Repaired (one transaction): ${c.usageRowsDeleted} usage row(s) deleted, ${c.messagesDeleted} unreferenced message(s) deleted, ${c.outputsAdded} tool output(s) added, ${c.indexesCreated} missing index(es) created.\n` +
      (c.walFramesCheckpointed > 0 || !c.walCheckpointComplete
        ? `Checkpoint: ${c.walFramesCheckpointed} -wal frame(s) copied into the file${c.walCheckpointComplete ? ', -wal emptied' : '; another connection kept it from finishing (run --fix again once it closes)'}.\n`
        : '') +
      `Backup: ${o.backup}\n`,
  );
  parts.push(`Re-check:\n${reportText(o.after, color)}`);
  return parts.join('\n');
}

/** The repair `--fix` would make for a finding, or null: none for its kind, a failed integrity_check, a server store. */
function repairOf(report: DoctorReport, f: Finding): string | null {
  const k = FINDING_KINDS[f.kind];
  return report.integrityOk && !isServerReport(report) && f.repairable !== false ? k.repair : null;
}

function reportJson(report: DoctorReport) {
  return {
    file: report.path,
    ...(isServerReport(report) ? { server: report.server } : {}),
    session: report.session,
    integrityOk: report.integrityOk,
    count: findingCount(report),
    totals: report.totals,
    findings: report.findings.map((f) => {
      const k = FINDING_KINDS[f.kind];
      return {
        ...f,
        title: k.title,
        breaks: k.breaks,
        upstream: k.upstream,
        fixedIn: k.fixedIn,
        repair: repairOf(report, f),
      };
    }),
  };
}

function outcomeJson(o: RepairOutcome) {
  return {
    ...reportJson(o.before),
    fix: { journalRolledBack: o.journalRolledBack, backup: o.backup, counts: o.counts, after: reportJson(o.after) },
  };
}

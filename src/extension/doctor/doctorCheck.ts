/**
 * A check made into what VS Code shows: the doctor's report from the store worker (never the host's thread), then,
 * for each session with findings, its branches and first turns read through the worker to write the session's
 * document (doctorModel.ts), and the file's own findings (integrity_check, a stale -wal) in the file's document.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { Finding } from '../../store/doctor/checkContext';
import type { DoctorReport } from '../../store/doctor/doctorReport';
import { checkServerStore } from '../../store/doctor/server/serverDoctor';
import type { WorkerSessionDatabase } from '../../store/worker/storeClient';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { MAX_BRANCHES, MAX_TURNS_PER_BRANCH, doctorDocument, type DocBranch, type DocWords } from './doctorModel';
import type { CheckedDocument, CheckedFile } from './doctorResults';

/** Checks the file (or one session of it) and makes its report's documents. */
export async function checkFile(
  registry: DatabaseRegistry,
  dbPath: string,
  sessionId: string | null,
  signal?: AbortSignal,
): Promise<CheckedFile> {
  const report = await registry.store.checkSessionFile(dbPath, sessionId === null ? {} : { session: sessionId }, signal);
  const bySession = grouped(report, sessionId);
  const entry = registry.get(dbPath);
  // The reader the Sessions view uses when the file is open; else one of its own in the worker, closed after.
  const own = entry?.db && !entry.remote ? undefined : await registry.store.openDatabase(dbPath, { readonly: true }).catch(() => undefined);
  const reader = (own ?? entry?.db) as WorkerSessionDatabase | undefined;
  try {
    const documents: CheckedDocument[] = [];
    for (const [key, findings] of bySession) {
      const branches = key !== null && report.integrityOk && reader ? await readBranches(reader, key, findings) : [];
      const notes = key === null ? sessionLines(bySession) : unreadNote(report);
      const words = docWords(dbPath, key, findings.length, new Date(), notes);
      documents.push({ ref: { dbPath, sessionId: key }, findings, ...doctorDocument(branches, findings, words) });
    }
    return { dbPath, integrityOk: report.integrityOk, remote: false, counts: countsOf(report, bySession), documents };
  } finally {
    await own?.close();
  }
}

/**
 * Checks a server store (or one session of it) read-only, on a connection of its own (network I/O, awaited: the host
 * never blocks on it). Its formats hold no branches or turns, so a session's findings sit on its document's first
 * line, and the report offers no repair.
 */
export async function checkServer(registry: DatabaseRegistry, address: string, sessionId: string | null): Promise<CheckedFile> {
  const remote = registry.require(address).remote;
  if (!remote) throw new Error(`${address} is not a server store`);
  const password = await registry.passwordOf(address);
  const report = await checkServerStore({
    url: remote.url,
    ...(password === undefined ? {} : { password }),
    ...(sessionId === null ? {} : { session: sessionId }),
  });
  const bySession = grouped(report, sessionId);
  const documents: CheckedDocument[] = [...bySession].map(([key, findings]) => {
    const notes = key === null ? sessionLines(bySession) : [vscode.l10n.t('A server store: a read-only report, nothing is repaired.')];
    const words = docWords(address, key, findings.length, new Date(), notes);
    return { ref: { dbPath: address, sessionId: key }, findings, ...doctorDocument([], findings, words) };
  });
  return { dbPath: address, integrityOk: report.integrityOk, remote: true, counts: countsOf(report, bySession), documents };
}

/** The findings by session (`null`: the file's own); the session checked, or the file, has a document even when clean. */
function grouped(report: DoctorReport, sessionId: string | null): Map<string | null, Finding[]> {
  const bySession = new Map<string | null, Finding[]>();
  // A session check keeps its file-wide findings (integrity_check) on the session's document: that is what was shown.
  for (const f of report.findings) {
    const key = f.session ?? sessionId;
    bySession.set(key, [...(bySession.get(key) ?? []), f]);
  }
  if (sessionId !== null && !bySession.has(sessionId)) bySession.set(sessionId, []);
  if (sessionId === null && !bySession.has(null)) bySession.set(null, []);
  return bySession;
}

/** Each document's count; findings past the listed bound count on the file's own line, so the badge says them all. */
function countsOf(report: DoctorReport, bySession: Map<string | null, Finding[]>): Map<string | null, number> {
  const counts = new Map<string | null, number>();
  for (const [key, findings] of bySession) counts.set(key, findings.length);
  const listed = report.findings.length;
  const total = Object.values(report.totals).reduce((a, b) => a + (b ?? 0), 0);
  if (total > listed) counts.set(null, (counts.get(null) ?? 0) + total - listed);
  return counts;
}

/** The session's branches with their first turns, and every turn a finding names past them. */
async function readBranches(reader: WorkerSessionDatabase, sessionId: string, findings: readonly Finding[]): Promise<DocBranch[]> {
  const tree = await reader.getBranchTree(sessionId);
  const named = new Set(findings.map((f) => f.branch).filter((b): b is string => b !== undefined));
  const out: DocBranch[] = [];
  for (const [i, b] of tree.entries()) {
    if (i >= MAX_BRANCHES && !named.has(b.branchId)) {
      out.push({ branchId: b.branchId, turnCount: b.userTurns, turns: [] });
      continue;
    }
    const page = await reader.getTurnsPage(sessionId, b.branchId, { limit: MAX_TURNS_PER_BRANCH });
    const turns = page.turns.map((t) => ({ turn: t.turn, preview: t.preview }));
    for (const f of findings) {
      if (f.branch !== b.branchId || f.turn === undefined || turns.some((t) => t.turn === f.turn)) continue;
      const one = await reader.getTurnsPage(sessionId, b.branchId, { afterTurn: f.turn - 1, limit: 1 });
      const t = one.turns[0];
      if (t?.turn === f.turn) turns.push({ turn: t.turn, preview: t.preview });
    }
    out.push({ branchId: b.branchId, turnCount: b.userTurns, turns });
  }
  return out;
}

function sessionLines(bySession: Map<string | null, Finding[]>): string[] {
  const sessions = [...bySession.entries()].filter(([k, f]) => k !== null && f.length > 0);
  if (sessions.length === 0) return [];
  return [
    '',
    vscode.l10n.t('Sessions with findings (each has its own document):'),
    ...sessions.map(
      ([k, f]) => `  ${f.length === 1 ? vscode.l10n.t('{0}: 1 finding', k!) : vscode.l10n.t('{0}: {1} findings', k!, f.length)}`,
    ),
  ];
}

function unreadNote(report: DoctorReport): string[] {
  return report.integrityOk ? [] : [vscode.l10n.t('integrity_check failed: the branches are not read, and no repair is offered.')];
}

function docWords(dbPath: string, sessionId: string | null, n: number, at: Date, notes: string[]): DocWords {
  const when = `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return {
    header:
      sessionId === null ? vscode.l10n.t('Session store {0}', dbPath) : vscode.l10n.t('Session {0} in {1}', sessionId, basename(dbPath)),
    checked:
      n === 0
        ? vscode.l10n.t('Checked {0}: no findings', when)
        : n === 1
          ? vscode.l10n.t('Checked {0}: 1 finding', when)
          : vscode.l10n.t('Checked {0}: {1} findings', when, n),
    notes,
    branch: (branchId, turns) =>
      turns === 1 ? vscode.l10n.t('branch {0} · 1 turn', branchId) : vscode.l10n.t('branch {0} · {1} turns', branchId, turns),
    branchWithoutRows: (branchId) => vscode.l10n.t('branch {0} · no rows (only what the finding names)', branchId),
    turn: (turn, preview) =>
      preview === null ? vscode.l10n.t('turn {0} · (unreadable row)', turn) : vscode.l10n.t('turn {0} · {1}', turn, preview),
    turnNotHeld: (turn) => vscode.l10n.t('turn {0} · not on this branch (only what the finding names)', turn),
    moreTurns: (n) => vscode.l10n.t('… {0} more turns', n),
    moreBranches: (n) => vscode.l10n.t('… {0} more branches', n),
  };
}

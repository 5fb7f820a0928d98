/**
 * What VS Code shows of a doctor report (docs/doctor.md, "In VS Code"), as plain data: the lines of the read-only
 * document that shows a checked session (its branches and turns, so each finding sits on the line of its branch or
 * turn), the diagnostic each finding makes there, and the words of a repair's confirmation. No `vscode` here: the unit
 * tests build these from reports. Kinds are read from the finding shape and `FINDING_KINDS`, never listed, so kinds
 * the doctor gains later get diagnostics (a warning, with their docs anchor) without a change here.
 */
import type { Finding } from '../../store/doctor/checkContext';
import { FINDING_KINDS, type FindingKind, type KindInfo } from '../../store/doctor/findingKinds';

/** Where each kind's page is: the section of docs/doctor.md named after the kind (the VSIX carries no docs). */
export const DOCTOR_DOCS_URL = 'https://github.com/agent-session-inspector/agent-session-inspector/blob/main/docs/doctor.md';

/** Turns listed per branch before "… N more turns" (a finding's turn is always listed): the document stays small. */
export const MAX_TURNS_PER_BRANCH = 100;
/** Branches listed per session before "… N more branches" (a finding's branch is always listed). */
export const MAX_BRANCHES = 200;
/** A turn's preview in the document, in code points (one line). */
const PREVIEW_CHARS = 80;
/** Row ids named per table in a repair's confirmation (a finding lists at most 50). */
const MAX_IDS_SHOWN = 50;

export type Severity = 'error' | 'warning';

/**
 * Errors: what makes reads fail or the next run go wrong (a damaged file, a branch the model API refuses, a session
 * that opens empty); warnings: rows that skew totals, take space or cannot be named. A kind not named here (one the
 * doctor gains later) is a warning until someone decides otherwise.
 */
const ERROR_KINDS: ReadonlySet<string> = new Set(['integrity-check', 'dangling-tool-call', 'empty-main']);

export function severityOf(kind: FindingKind): Severity {
  return ERROR_KINDS.has(kind) ? 'error' : 'warning';
}

/** A kind's description, with a stand-in for a kind this build does not know (a newer store worker's). */
export function kindInfo(kind: FindingKind): KindInfo {
  return (
    (FINDING_KINDS as Partial<Record<string, KindInfo>>)[kind] ?? {
      title: kind,
      breaks: kind,
      upstream: null,
      fixedIn: '',
      repair: null,
    }
  );
}

/** The docs page of a kind: its section of docs/doctor.md (GitHub's anchor of a `### kind` heading is the kind). */
export function docsUrl(kind: FindingKind): string {
  return `${DOCTOR_DOCS_URL}#${kind}`;
}

/**
 * Whether a finding gets a Quick Fix: its kind has a repair, the finding is not marked otherwise (`repairable: false`,
 * an altered-schema change the repair leaves alone) and the file passed integrity_check.
 */
export function isRepairable(finding: Finding, integrityOk: boolean): boolean {
  return integrityOk && kindInfo(finding.kind).repair !== null && finding.repairable !== false;
}

/** A turn of a branch as the document lists it. */
export interface DocTurn {
  turn: number;
  /** The user message's preview, or null (a corrupt row). */
  preview: string | null;
}

/** A branch as the document lists it: its first turns (up to `MAX_TURNS_PER_BRANCH`) and how many it has. */
export interface DocBranch {
  branchId: string;
  turnCount: number;
  turns: DocTurn[];
}

/** The words the document is written in (localized by the caller; this module stays free of `vscode`). */
export interface DocWords {
  /** "Session {0} in {1}" style header, already filled. */
  header: string;
  /** "Checked … : N findings" line, already filled. */
  checked: string;
  branch(branchId: string, turnCount: number): string;
  /** A branch a finding names that holds no rows. */
  branchWithoutRows(branchId: string): string;
  turn(turn: number, preview: string | null): string;
  /** A turn a finding names that the branch does not hold (turn 0 with only usage, a deleted turn). */
  turnNotHeld(turn: number): string;
  moreTurns(n: number): string;
  moreBranches(n: number): string;
  /** Lines under the check's line: why the branches are not listed (a damaged file), the sessions with findings. */
  notes?: readonly string[];
}

export interface DoctorDocument {
  text: string;
  /** The 0-based line of each finding, in the order given. */
  findingLines: number[];
}

/** One line of a preview: newlines and tabs as spaces, cut at `PREVIEW_CHARS` code points. */
export function oneLinePreview(text: string): string {
  const flat = text.replace(/[\r\n\t\u2028\u2029]+/g, ' ').trim();
  const points = [...flat];
  return points.length > PREVIEW_CHARS ? `${points.slice(0, PREVIEW_CHARS - 1).join('')}…` : flat;
}

/**
 * The document of one session (or, with no branches, of a whole file): the header, the check's line, then each
 * branch with its turns. A finding is put on the line of its turn, else of its branch, else of the header; a branch or
 * turn a finding names that the session does not hold (a deleted branch's usage row, turn 0 with no items) gets a line
 * of its own saying so, so every finding has a place.
 */
export function doctorDocument(branches: readonly DocBranch[], findings: readonly Finding[], words: DocWords): DoctorDocument {
  const lines: string[] = [words.header, words.checked];
  lines.push(...(words.notes ?? []));
  const branchLine = new Map<string, number>();
  const turnLine = new Map<string, number>();
  const key = (branch: string, turn: number) => JSON.stringify([branch, turn]);
  // The turns findings name, per branch, so those are listed even past the bound.
  const named = new Map<string, Set<number>>();
  for (const f of findings) {
    if (f.branch === undefined) continue;
    const set = named.get(f.branch) ?? new Set<number>();
    if (f.turn !== undefined) set.add(f.turn);
    named.set(f.branch, set);
  }

  const listBranch = (b: DocBranch | undefined, branchId: string) => {
    lines.push('');
    branchLine.set(branchId, lines.length);
    lines.push(b ? words.branch(branchId, b.turnCount) : words.branchWithoutRows(branchId));
    const turns = b?.turns ?? [];
    const shown = turns.slice(0, MAX_TURNS_PER_BRANCH);
    for (const t of shown) {
      turnLine.set(key(branchId, t.turn), lines.length);
      lines.push(`  ${words.turn(t.turn, t.preview === null ? null : oneLinePreview(t.preview))}`);
    }
    const hidden = (b?.turnCount ?? 0) - shown.length;
    for (const turn of [...(named.get(branchId) ?? [])].sort((x, y) => x - y)) {
      if (turnLine.has(key(branchId, turn))) continue;
      const listed = turns.find((t) => t.turn === turn);
      turnLine.set(key(branchId, turn), lines.length);
      lines.push(
        `  ${listed ? words.turn(turn, listed.preview === null ? null : oneLinePreview(listed.preview)) : words.turnNotHeld(turn)}`,
      );
    }
    if (hidden > 0) lines.push(`  ${words.moreTurns(hidden)}`);
  };

  const shownBranches = branches.slice(0, MAX_BRANCHES);
  for (const b of shownBranches) listBranch(b, b.branchId);
  for (const branchId of named.keys()) {
    if (branchLine.has(branchId)) continue;
    listBranch(
      branches.find((b) => b.branchId === branchId),
      branchId,
    );
  }
  if (branches.length > shownBranches.length) lines.push('', words.moreBranches(branches.length - shownBranches.length));

  const findingLines = findings.map((f) => {
    if (f.branch !== undefined && f.turn !== undefined) return turnLine.get(key(f.branch, f.turn)) ?? branchLine.get(f.branch) ?? 0;
    if (f.branch !== undefined) return branchLine.get(f.branch) ?? 0;
    return 0;
  });
  return { text: `${lines.join('\n')}\n`, findingLines };
}

/** What a finding's diagnostic says and is. */
export interface DiagnosticSpec {
  line: number;
  severity: Severity;
  /** What it breaks, then what was seen. */
  message: string;
  /** The kind, linked to its docs section. */
  code: { value: FindingKind; target: string };
  repairable: boolean;
}

/** One diagnostic per finding, on the line the document gave it. */
export function diagnosticSpecs(findings: readonly Finding[], lines: readonly number[], integrityOk: boolean): DiagnosticSpec[] {
  return findings.map((f, i) => ({
    line: lines[i] ?? 0,
    severity: severityOf(f.kind),
    message: `${kindInfo(f.kind).breaks}\n${f.detail}`,
    code: { value: f.kind, target: docsUrl(f.kind) },
    repairable: isRepairable(f, integrityOk),
  }));
}

/** The rows a finding names, one line per table: "agent_messages rows 9, 10". */
export function rowLines(finding: Finding): string[] {
  return Object.entries(finding.rows ?? {}).map(([table, ids]) => {
    const shown = ids.slice(0, MAX_IDS_SHOWN).join(', ');
    return `${table} ${ids.length === 1 ? 'row' : 'rows'} ${shown}${ids.length > MAX_IDS_SHOWN ? ', …' : ''}`;
  });
}

/** The place of a finding as the CLI writes it: session, branch, turn. */
export function placeOf(finding: Finding): string {
  const parts: string[] = [];
  if (finding.session !== undefined) parts.push(`session ${JSON.stringify(finding.session)}`);
  if (finding.branch !== undefined) parts.push(`branch ${JSON.stringify(finding.branch)}`);
  if (finding.turn !== undefined) parts.push(`turn ${finding.turn}`);
  return parts.join(', ');
}

/** The repair target of a finding: its kind and place (store/doctor/repairs.ts narrows each repair to it). */
export function targetOf(finding: Finding): { kind: FindingKind; session?: string; branch?: string; turn?: number } {
  return {
    kind: finding.kind,
    ...(finding.session === undefined ? {} : { session: finding.session }),
    ...(finding.branch === undefined ? {} : { branch: finding.branch }),
    ...(finding.turn === undefined ? {} : { turn: finding.turn }),
  };
}

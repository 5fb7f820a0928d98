/**
 * The doctor's last report of each checked file, as VS Code shows it (docs/doctor.md, "In VS Code"): one read-only
 * document per checked session (our own scheme; its text is built when the check ran, so a finding's line never
 * moves under it) and one for the file's own findings, a diagnostic per finding on those documents (the Problems
 * panel), a badge with the count on the file (the Sessions view and the Explorer) and on each session, and a Quick Fix
 * on each repairable finding. Nothing is kept across windows: a report is a snapshot of the moment it was made.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { Finding } from '../../store/doctor/checkContext';
import { CommandId } from '../core/contributions';
import { workbenchSetting } from '../core/settings';
import { diagnosticSpecs, isRepairable, kindInfo, type DiagnosticSpec, type DoctorDocument } from './doctorModel';
import { DOCTOR_SCHEME, doctorUri, parseDoctorUri, type DoctorDocRef } from './doctorUris';

/** One document of a report: a session's (or the file's own findings'). */
export interface CheckedDocument extends DoctorDocument {
  ref: DoctorDocRef;
  findings: Finding[];
}

/** A file's last report. */
export interface CheckedFile {
  dbPath: string;
  /** Whether integrity_check passed: no repair is offered on a file that failed it. */
  integrityOk: boolean;
  /** A server store: its report is read-only. */
  remote: boolean;
  /** Every finding's count per session (`null`: the file's own), listed or not. */
  counts: Map<string | null, number>;
  documents: CheckedDocument[];
}

/** What a Quick Fix hands the repair command: the document and the finding's place in it. */
export interface FindingRef {
  uri: string;
  index: number;
}

export class DoctorResults implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly files = new Map<string, CheckedFile>();
  private readonly changedDocs = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changedDocs.event;
  private readonly changedDecorations = new vscode.EventEmitter<vscode.Uri[]>();
  private readonly subscriptions: vscode.Disposable[] = [this.changedDocs, this.changedDecorations];
  /** Made on the first report, so a window that never checks a file registers nothing but the documents' scheme. */
  private diagnostics: vscode.DiagnosticCollection | undefined;

  constructor() {
    // The scheme is registered at once: a tab of a report restored after a reload asks for its text before any check.
    this.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(DOCTOR_SCHEME, this));
  }

  /** The last report of a file, if it was checked in this window. */
  file(dbPath: string): CheckedFile | undefined {
    return this.files.get(dbPath);
  }

  /** Shows a report: its documents' text, diagnostics and badges replace what the file's last report showed. */
  show(file: CheckedFile): void {
    const collection = this.start();
    const before = this.files.get(file.dbPath);
    for (const d of before?.documents ?? []) collection.delete(doctorUri(d.ref));
    this.files.set(file.dbPath, file);
    for (const d of file.documents) {
      const uri = doctorUri(d.ref);
      const lines = d.text.split('\n');
      collection.set(
        uri,
        diagnosticSpecs(d.findings, d.findingLines, file.integrityOk).map((spec) => diagnosticOf(spec, lines[spec.line]?.length ?? 0)),
      );
      this.changedDocs.fire(uri);
    }
    const sessions = new Set([...(before?.counts.keys() ?? []), ...file.counts.keys()]);
    this.changedDecorations.fire([
      vscode.Uri.file(file.dbPath),
      ...[...sessions].map((sessionId) => doctorUri({ dbPath: file.dbPath, sessionId })),
    ]);
  }

  /** The finding a Quick Fix names, with its file's report. */
  finding(ref: FindingRef): { file: CheckedFile; document: CheckedDocument; finding: Finding } | undefined {
    const { dbPath, sessionId } = parseDoctorUri(vscode.Uri.parse(ref.uri, true));
    const file = this.files.get(dbPath);
    const document = file?.documents.find((d) => d.ref.sessionId === sessionId);
    const finding = document?.findings[ref.index];
    return file && document && finding ? { file, document, finding } : undefined;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const ref = parseDoctorUri(uri);
    const document = this.files.get(ref.dbPath)?.documents.find((d) => d.ref.sessionId === ref.sessionId);
    return (
      document?.text ??
      `${vscode.l10n.t('{0} has not been checked in this window. Run "Check Session Store…" on it.', basename(ref.dbPath))}\n`
    );
  }

  private start(): vscode.DiagnosticCollection {
    if (this.diagnostics) return this.diagnostics;
    this.diagnostics = vscode.languages.createDiagnosticCollection('agent-sessions-doctor');
    this.subscriptions.push(
      this.diagnostics,
      vscode.window.registerFileDecorationProvider({
        onDidChangeFileDecorations: this.changedDecorations.event,
        provideFileDecoration: (uri) => this.decoration(uri),
      }),
      vscode.languages.registerCodeActionsProvider(
        { scheme: DOCTOR_SCHEME },
        { provideCodeActions: (doc, _r, ctx) => this.quickFixes(doc, ctx) },
        {
          providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
        },
      ),
    );
    return this.diagnostics;
  }

  /** The count badge: on the file (Sessions view, Explorer, its tabs) and on each session (its tree item, its report). */
  private decoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    let count: number | undefined;
    if (uri.scheme === 'file') {
      const file = this.files.get(uri.fsPath);
      count = file ? [...file.counts.values()].reduce((a, b) => a + b, 0) : undefined;
    } else if (uri.scheme === DOCTOR_SCHEME) {
      // The session's report document holds its diagnostics, so VS Code's own Problems decoration already counts them
      // on the session's item (a second badge would read "1, 1"); ours stands in when the user turned that off.
      if (workbenchSetting('problems.decorations.enabled', true)) return undefined;
      const ref = parseDoctorUri(uri);
      count = this.files.get(ref.dbPath)?.counts.get(ref.sessionId);
    }
    if (!count) return undefined;
    const tooltip = count === 1 ? vscode.l10n.t('1 doctor finding') : vscode.l10n.t('{0} doctor findings', count);
    // A badge holds two characters.
    return new vscode.FileDecoration(
      count > 99 ? '99+'.slice(0, 2) : String(count),
      tooltip,
      new vscode.ThemeColor('list.warningForeground'),
    );
  }

  /** A Quick Fix per repairable finding under the cursor: it asks before it repairs (the repair command's modal). */
  private quickFixes(doc: vscode.TextDocument, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const ref = parseDoctorUri(doc.uri);
    const file = this.files.get(ref.dbPath);
    const document = file?.documents.find((d) => d.ref.sessionId === ref.sessionId);
    if (!file || !document) return [];
    const actions: vscode.CodeAction[] = [];
    for (const diagnostic of context.diagnostics) {
      const index = document.findings.findIndex(
        (f, i) =>
          document.findingLines[i] === diagnostic.range.start.line &&
          codeValue(diagnostic) === f.kind &&
          diagnostic.message === diagnosticSpecs([f], [0], file.integrityOk)[0]!.message,
      );
      const finding = document.findings[index];
      // No repair on a server store, a file that failed integrity_check, nor for a finding that is reported only.
      if (!finding || file.remote || !isRepairable(finding, file.integrityOk)) continue;
      const action = new vscode.CodeAction(vscode.l10n.t('Repair: {0}…', kindInfo(finding.kind).title), vscode.CodeActionKind.QuickFix);
      action.diagnostics = [diagnostic];
      action.isPreferred = true;
      action.command = {
        command: CommandId.repairFinding,
        title: vscode.l10n.t('Repair Finding…'),
        arguments: [{ uri: doc.uri.toString(), index } satisfies FindingRef],
      };
      actions.push(action);
    }
    return actions;
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}

function codeValue(d: vscode.Diagnostic): string | undefined {
  const code = d.code;
  return typeof code === 'object' ? String(code.value) : code === undefined ? undefined : String(code);
}

/** The whole line of the finding's branch or turn is underlined. */
function diagnosticOf(spec: DiagnosticSpec, lineLength: number): vscode.Diagnostic {
  const range = new vscode.Range(spec.line, 0, spec.line, lineLength);
  const d = new vscode.Diagnostic(
    range,
    spec.message,
    spec.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
  );
  d.source = 'agent-sessions doctor';
  d.code = { value: spec.code.value, target: vscode.Uri.parse(spec.code.target) };
  return d;
}

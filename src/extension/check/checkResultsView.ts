/**
 * The "Check Results" view and the status-bar summary (docs/check.md, "In VS Code"): a tree, as the search results
 * are, since a check's results are rows with a status and a few reasons, filled in as cases finish. A case row has its
 * verdict's icon (PASS, FAIL, ERROR, ORPHANED), the graders' marks and its time; its children are each grader's
 * reason, or the error. Above them, once compared with a saved experiment, the flips, regressions first. The view's
 * title holds *Show Failures Only* / *Show All Cases*; the model (checkResultsModel.ts) holds what is shown.
 */
import * as vscode from 'vscode';
import type { CaseResult, GraderResult } from '../../agents/check/checkTypes';
import type { ExperimentFlip } from '../../store/experiments/experimentTypes';
import { CheckResultsModel } from './checkResultsModel';

/** Context keys the view's menus read. */
export const CHECK_CONTEXT = {
  used: 'agentSessions.checkUsed',
  running: 'agentSessions.checkRunning',
  failuresOnly: 'agentSessions.checkFailuresOnly',
  hasFailures: 'agentSessions.checkHasFailures',
  hasResults: 'agentSessions.checkHasResults',
} as const;

export type CheckNode =
  | { kind: 'case'; result: CaseResult }
  | { kind: 'grader'; caseId: string; grade: GraderResult; index: number }
  | { kind: 'error'; caseId: string; text: string }
  | { kind: 'flips'; text: string }
  | { kind: 'flip'; flip: ExperimentFlip }
  | { kind: 'note'; text: string };

/** Redraws while results stream in are coalesced to this interval. */
const REFRESH_MS = 150;

const STATUS_ICONS: Record<CaseResult['status'], [string, string]> = {
  pass: ['pass', 'testing.iconPassed'],
  fail: ['error', 'testing.iconFailed'],
  error: ['warning', 'testing.iconErrored'],
  orphaned: ['circle-slash', 'testing.iconSkipped'],
};

export function statusWord(status: CaseResult['status']): string {
  switch (status) {
    case 'pass':
      return vscode.l10n.t('PASS');
    case 'fail':
      return vscode.l10n.t('FAIL');
    case 'error':
      return vscode.l10n.t('ERROR');
    case 'orphaned':
      return vscode.l10n.t('ORPHANED');
  }
}

/** `12 passed, 1 failed`, then errors and orphaned cases when there are any: the CLI's closing line, localized. */
export function totalsText(t: { passed: number; failed: number; errors: number; orphaned: number }): string {
  let text = vscode.l10n.t('{0} passed, {1} failed', t.passed, t.failed);
  if (t.errors > 0) text += vscode.l10n.t(', {0} errors', t.errors);
  if (t.orphaned > 0) text += vscode.l10n.t(', {0} orphaned', t.orphaned);
  return text;
}

function flipWord(kind: ExperimentFlip['kind']): string {
  switch (kind) {
    case 'regression':
      return vscode.l10n.t('REGRESSION');
    case 'fix':
      return vscode.l10n.t('FIX');
    case 'new':
      return vscode.l10n.t('NEW');
    case 'missing':
      return vscode.l10n.t('MISSING');
  }
}

const seconds = (ms: number): string => vscode.l10n.t('{0} s', (ms / 1000).toFixed(1));

export class CheckResultsView implements vscode.TreeDataProvider<CheckNode>, vscode.Disposable {
  readonly model = new CheckResultsModel();
  private readonly changed = new vscode.EventEmitter<CheckNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<CheckNode>;
  private readonly status: vscode.StatusBarItem;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly viewId: string) {
    this.view = vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true });
    this.status = vscode.window.createStatusBarItem('agentSessions.checkSummary', vscode.StatusBarAlignment.Left, 40);
    this.status.name = vscode.l10n.t('Agent Check');
    this.status.command = `${viewId}.focus`;
  }

  /** Shows what changed soon (while results stream in), or now. */
  refresh(now = false): void {
    if (!now) {
      this.timer ??= setTimeout(() => this.refresh(true), REFRESH_MS);
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.changed.fire(undefined);
    this.drawSummary();
  }

  /** The status bar, the view's message and the context keys its menus read. */
  private drawSummary(): void {
    const m = this.model;
    const t = m.totals();
    const line = totalsText(t);
    this.status.text = m.running
      ? `$(loading~spin) ${vscode.l10n.t('Check: {0} of {1}', t.cases, t.cases + t.pending)}`
      : `$(${t.failed + t.errors > 0 ? 'error' : 'pass'}) ${vscode.l10n.t('Check: {0}', line)}`;
    this.status.tooltip = vscode.l10n.t('Agent check of {0}: {1}. Click to show the results.', m.scope?.dbPath ?? '', line);
    if (m.hasResults || m.running) this.status.show();
    this.view.message = m.running
      ? vscode.l10n.t('Checking… {0} of {1} cases: {2}', t.cases, t.cases + t.pending, line)
      : m.hasResults
        ? `${m.interrupted ? vscode.l10n.t('Stopped: ') : ''}${line}${m.failuresOnly ? vscode.l10n.t(' (failures only)') : ''}`
        : undefined;
    void vscode.commands.executeCommand('setContext', CHECK_CONTEXT.running, m.running);
    void vscode.commands.executeCommand('setContext', CHECK_CONTEXT.failuresOnly, m.failuresOnly);
    void vscode.commands.executeCommand('setContext', CHECK_CONTEXT.hasFailures, !m.running && m.failedCases().length > 0);
    void vscode.commands.executeCommand('setContext', CHECK_CONTEXT.hasResults, !m.running && m.hasResults);
  }

  /** Makes the view appear (it is hidden until the first check) and shows it. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand('setContext', CHECK_CONTEXT.used, true);
    await vscode.commands.executeCommand(`${this.viewId}.focus`);
  }

  getChildren(node?: CheckNode): CheckNode[] {
    const m = this.model;
    if (!node) {
      const rows: CheckNode[] = [];
      if (m.comparison) {
        const c = m.comparison;
        const count = (k: ExperimentFlip['kind']) => c.flips.filter((f) => f.kind === k).length;
        rows.push({
          kind: 'flips',
          text: vscode.l10n.t(
            'Against "{0}": {1} regressions, {2} fixes, {3} unchanged',
            c.baseline.name,
            count('regression'),
            count('fix'),
            c.unchanged,
          ),
        });
      }
      const visible = m.visible();
      if (visible.length === 0 && m.hasResults && m.failuresOnly) rows.push({ kind: 'note', text: vscode.l10n.t('No case failed.') });
      return [...rows, ...visible.map((result): CheckNode => ({ kind: 'case', result }))];
    }
    if (node.kind === 'flips') return m.flips().map((flip): CheckNode => ({ kind: 'flip', flip }));
    if (node.kind !== 'case') return [];
    const r = node.result;
    const rows: CheckNode[] = r.graders.map((grade, index): CheckNode => ({ kind: 'grader', caseId: r.case.id, grade, index }));
    if (r.error !== null) rows.push({ kind: 'error', caseId: r.case.id, text: r.error });
    return rows;
  }

  getTreeItem(node: CheckNode): vscode.TreeItem {
    switch (node.kind) {
      case 'case':
        return this.caseItem(node.result);
      case 'grader': {
        const g = node.grade;
        const item = new vscode.TreeItem(`${g.grader}: ${g.reason}`, vscode.TreeItemCollapsibleState.None);
        item.description = g.score.toFixed(2);
        item.tooltip = `${g.grader} · ${g.pass ? vscode.l10n.t('passed') : vscode.l10n.t('failed')} · ${g.score.toFixed(2)}\n${g.reason}`;
        item.iconPath = new vscode.ThemeIcon(
          g.pass ? 'check' : 'close',
          new vscode.ThemeColor(g.pass ? 'testing.iconPassed' : 'testing.iconFailed'),
        );
        item.id = `grader:${node.caseId}:${node.index}`;
        return item;
      }
      case 'error': {
        const item = new vscode.TreeItem(node.text.split('\n')[0] ?? '', vscode.TreeItemCollapsibleState.None);
        item.tooltip = node.text;
        item.iconPath = new vscode.ThemeIcon('warning');
        item.id = `error:${node.caseId}`;
        return item;
      }
      case 'flips': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = new vscode.ThemeIcon('git-compare');
        item.id = 'flips';
        return item;
      }
      case 'flip': {
        const f = node.flip;
        const item = new vscode.TreeItem(`${flipWord(f.kind)} ${f.caseId}`, vscode.TreeItemCollapsibleState.None);
        const side = (status: ExperimentFlip['before']) => (status === null ? '—' : statusWord(status));
        item.description = `${side(f.before)} → ${side(f.after)}${f.reason ? ` · ${f.reason}` : ''}`;
        item.tooltip = item.description;
        item.iconPath = new vscode.ThemeIcon(
          f.kind === 'regression' ? 'arrow-down' : f.kind === 'fix' ? 'arrow-up' : f.kind === 'new' ? 'add' : 'remove',
          f.kind === 'regression'
            ? new vscode.ThemeColor('testing.iconFailed')
            : f.kind === 'fix'
              ? new vscode.ThemeColor('testing.iconPassed')
              : undefined,
        );
        item.id = `flip:${f.kind}:${f.caseId}`;
        return item;
      }
      case 'note': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
    }
  }

  private caseItem(r: CaseResult): vscode.TreeItem {
    const c = r.case;
    const hasChildren = r.graders.length > 0 || r.error !== null;
    // Failures open with their reasons showing; a pass's reasons are one click away.
    const state = !hasChildren
      ? vscode.TreeItemCollapsibleState.None
      : r.status === 'pass'
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.Expanded;
    const item = new vscode.TreeItem(vscode.l10n.t('{0} turn {1}', `${c.sessionId}/${c.branchId}`, c.turn), state);
    const marks = r.graders.map((g) => `${g.grader} ${g.pass ? '✓' : '✗'}`).join(' ');
    const tokens = r.run?.usage?.totalTokens ? vscode.l10n.t('{0} tok', r.run.usage.totalTokens) : '';
    item.description = [statusWord(r.status), marks, tokens, r.status === 'orphaned' ? '' : seconds(r.ms)].filter(Boolean).join(' · ');
    const tooltip = new vscode.MarkdownString();
    const input = typeof c.input === 'string' ? c.input : vscode.l10n.t('(a message with content parts)');
    tooltip.appendText(`${statusWord(r.status)} ${c.id} (${c.verdict})\n\n${input.slice(0, 500)}`);
    if (r.run) tooltip.appendText(`\n\n${vscode.l10n.t('New answer:')} ${r.run.answer.slice(0, 500)}`);
    item.tooltip = tooltip;
    const [icon, color] = STATUS_ICONS[r.status];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
    item.id = `case:${c.id}`;
    // Open as Comparison is a menu entry, not a click: it runs the case again into the session file, after asking.
    item.contextValue = `checkCase;${r.status}`;
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.view.dispose();
    this.status.dispose();
    this.changed.dispose();
  }
}

/**
 * *Check Agent Against Reviews…* and what follows it in VS Code (docs/check.md, "In VS Code"): the check asked step by
 * step (checkPicks.ts), run with a cancellable progress while its results stream into the Check Results view
 * (checkResultsView.ts), *Re-run Failed Cases*, *Open as Comparison*, saving the check as an experiment and comparing
 * it with a saved one, and the status-bar summary. The session file is never written, except by Open as Comparison
 * once the user agreed (it keeps that case's run as a branch to compare).
 *
 * Arguments for tests and keybindings: Check Agent Against Reviews `(databaseOrSessionNode?, { query, agent, graders,
 * tools }?)`; Open as Comparison `(caseId | caseNode, confirm?)`; Save as Experiment `(name?, replace?)`; Compare with
 * Experiment `(name?)`. Each resolves with the check as the view now shows it (`CheckSummary`), undefined when cancelled.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { API_KEY_SECRET_ID, resolveApiKey } from '../../agents/apiKey';
import type { CaseResult, CheckCase, Grader } from '../../agents/check/checkTypes';
import { caseReasons } from '../../agents/check/reports/reportTotals';
import { ExperimentStore, checkExperimentName, defaultExperimentsPath } from '../../store/experiments/experimentStore';
import { errorMessage } from '../../shared/errorMessage';
import { arg, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { CommandId, Setting, ViewId } from '../core/contributions';
import { setting } from '../core/settings';
import { UserFacingError } from '../core/userError';
import { plainIconText } from '../core/iconText';
import type { Services } from '../services';
import { asCheckArgs, pickCheckAgent, pickFile, pickGraders, pickQuery, pickTools, type CheckArgs } from './checkPicks';
import { CheckResultsView, totalsText, type CheckNode } from './checkResultsView';
import { checkGraders, runRequestCases, selectRequestCases, type CheckDeps, type CheckRequest } from './checkRunner';
import type { CheckTotalsNow } from './checkResultsModel';
import { showInformationNotice, showWarningNotice, withNoticeProgress } from '../core/notices';

/** What the commands resolve with: the check as the view shows it. */
export interface CheckSummary {
  totals: CheckTotalsNow;
  interrupted: boolean;
  cases: { id: string; status: CaseResult['status']; reasons: string[]; keptBranch: string | null }[];
  /** The cases the view lists (all, or the failures only). */
  shown: string[];
  flips: { kind: string; caseId: string }[];
}

export function checkCommands(
  s: Services,
): CommandsOf<
  | 'checkAgent'
  | 'rerunFailedCases'
  | 'showCheckFailuresOnly'
  | 'showAllCheckCases'
  | 'openCheckCaseAsComparison'
  | 'saveCheckExperiment'
  | 'compareCheckWithExperiment'
> {
  const view = new CheckResultsView(ViewId.checkResults);
  s.context.subscriptions.push(view);
  const model = view.model;
  const deps: CheckDeps = { registry: s.registry, reviews: s.reviews, extensionUri: s.context.extensionUri };
  /** The request of the check shown (Re-run Failed Cases and Open as Comparison run its cases again). */
  let last: { request: CheckRequest; graders: Grader[] } | undefined;
  let running: AbortController | undefined;
  // A window that closes mid-check stops its agents, as Cancel would.
  s.context.subscriptions.push({ dispose: () => running?.abort() });

  const summary = (): CheckSummary => ({
    totals: model.totals(),
    interrupted: model.interrupted,
    cases: model.results().map((r) => ({ id: r.case.id, status: r.status, reasons: caseReasons(r), keptBranch: r.run?.branchId ?? null })),
    shown: model.visible().map((r) => r.case.id),
    flips: model.flips().map((f) => ({ kind: f.kind, caseId: f.caseId })),
  });

  const notRunning = (title: string): void => {
    if (running) throw new UserFacingError(vscode.l10n.t('{0}: a check is running; wait for it or cancel it first.', title));
  };

  /**
   * Runs `cases` of `request` with a cancellable progress, each result into the view as it finishes. Cancel aborts the
   * check: the running cases are stopped, what finished is kept.
   */
  const runCases = async (
    title: string,
    request: CheckRequest,
    graders: Grader[],
    choose: (signal: AbortSignal) => Promise<{ cases: CheckCase[]; orphaned: { case: CheckCase; reason: string }[] }>,
    begin: (cases: CheckCase[], orphaned: number) => void,
  ): Promise<CheckSummary | undefined> => {
    const controller = new AbortController();
    running = controller;
    try {
      return await withNoticeProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => controller.abort());
          progress.report({ message: vscode.l10n.t('Reading the reviewed turns…') });
          let selection;
          try {
            selection = await choose(controller.signal);
          } catch (err) {
            if (controller.signal.aborted) return undefined;
            throw err;
          }
          const total = selection.cases.length + selection.orphaned.length;
          if (total === 0)
            throw new UserFacingError(
              vscode.l10n.t(
                'No cases: no reviewed turn of {0} is a good turn or a bad turn with a correction{1}. Nothing was checked.',
                request.dbPath,
                request.query ? vscode.l10n.t(' matching "{0}"', request.query) : '',
              ),
            );
          begin(selection.cases, selection.orphaned.length);
          view.refresh(true);
          await view.reveal();
          let done = 0;
          const outcome = await runRequestCases(deps, request, selection, {
            graders,
            keepBranches: false,
            signal: controller.signal,
            onResult: (r) => {
              model.add(r);
              view.refresh();
              done++;
              progress.report({
                increment: 100 / total,
                message: vscode.l10n.t('{0} of {1} cases: {2}', done, total, totalsText(model.totals())),
              });
            },
            log: (line) => s.log.info(`check: ${line}`),
          });
          model.finish(outcome.interrupted, outcome.report.ms);
          view.refresh(true);
          const t = model.totals();
          const line = totalsText(t);
          if (outcome.interrupted) void showWarningNotice(vscode.l10n.t('Check stopped: {0}.', line));
          else if (t.failed + t.errors > 0) void showWarningNotice(vscode.l10n.t('Check: {0}.', line));
          else if (t.passed === 0) void showWarningNotice(vscode.l10n.t('Check: {0}. No case ran.', line));
          else void showInformationNotice(vscode.l10n.t('Check: {0}.', line));
          return summary();
        },
      );
    } finally {
      if (model.running) {
        // Failed before or while running: what finished stays shown.
        model.finish(true, 0);
        view.refresh(true);
      }
      running = undefined;
    }
  };

  /** The check's request from the answers (asked for those not given); undefined when cancelled. */
  const ask = async (node: { dbPath: string; sessionId?: string } | undefined, given: CheckArgs): Promise<CheckRequest | undefined> => {
    const title = vscode.l10n.t('Check Agent Against Reviews');
    const dbPath = node?.dbPath ?? (await pickFile(s.registry));
    if (dbPath === undefined) return undefined;
    const query = given.query ?? (await pickQuery(title));
    if (query === undefined) return undefined;
    const agentId = given.agent ?? (await pickCheckAgent(s.runner.choices, title));
    if (agentId === undefined) return undefined;
    const resolved = s.runner.choices.resolve(agentId);
    const stored = await s.context.secrets.get(API_KEY_SECRET_ID);
    let apiKey: string | undefined;
    try {
      apiKey = resolveApiKey({ stored }).key;
    } catch {
      apiKey = undefined;
    }
    const baseUrl = setting(Setting.agentBaseUrl).trim();
    if (resolved.kind === 'builtin') {
      // As a what-if through it: refused before any case runs when no key reaches the configured server.
      try {
        resolveApiKey({ stored, baseUrl: baseUrl || undefined });
      } catch (err) {
        throw new UserFacingError(errorMessage(err), { title: vscode.l10n.t('Set API Key'), command: CommandId.setApiKey });
      }
    }
    const graders = given.graders ?? (await pickGraders(title, apiKey !== undefined));
    if (graders === undefined) return undefined;
    const defaults = s.replay.defaults();
    const tools = given.tools ?? (await pickTools(title, defaults.mode));
    if (tools === undefined) return undefined;
    return {
      dbPath,
      sessionId: node?.sessionId ?? null,
      query,
      agent: resolved.kind === 'external' ? resolved.agent : s.runner.checkAgent(),
      graders,
      tools,
      apiKey,
      endpoint: baseUrl || undefined,
      nameOnly: defaults.nameOnly,
      timeoutMs: setting(Setting.agentCommandTimeoutSeconds) * 1000,
      cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    };
  };

  /** The result a case argument names: its id, or its row in the view. */
  const caseOf = (value: unknown, title: string): CaseResult => {
    const id =
      typeof value === 'string'
        ? value
        : (value as CheckNode | undefined)?.kind === 'case'
          ? (value as Extract<CheckNode, { kind: 'case' }>).result.case.id
          : badArgument(title, vscode.l10n.t('a case of the Check Results view'));
    const result = model.result(id);
    if (!result) throw new UserFacingError(vscode.l10n.t('The case {0} is not in the check results any more.', id));
    return result;
  };

  /** The experiment store beside the shown check's review store (docs/check.md, "Experiments"). */
  const experimentsPath = (): string => {
    if (!model.scope) throw new UserFacingError(vscode.l10n.t('Run a check first.'));
    return defaultExperimentsPath(s.reviews.pathFor(model.scope.dbPath, false));
  };

  const canBeKept = (title: string): void => {
    notRunning(title);
    if (!model.hasResults) throw new UserFacingError(vscode.l10n.t('Run a check first.'));
    if (model.interrupted)
      throw new UserFacingError(vscode.l10n.t('The check was stopped before every case finished: it is neither saved nor compared.'));
  };

  const setFilter = (failuresOnly: boolean): CheckSummary => {
    model.failuresOnly = failuresOnly;
    view.refresh(true);
    return summary();
  };

  return {
    checkAgent: command(
      vscode.l10n.t('Check Agent Against Reviews…'),
      [arg.optionalNode(() => vscode.l10n.t('a session file or a session'), 'database', 'session'), arg.any],
      async (node, options) => {
        const title = vscode.l10n.t('Check Agent Against Reviews…');
        notRunning(title);
        const request = await ask(node, asCheckArgs(options, title));
        if (!request) return undefined;
        const graders = await checkGraders(request);
        last = { request, graders };
        return runCases(
          vscode.l10n.t('Checking the agent against the reviews'),
          request,
          graders,
          (signal) => selectRequestCases(deps, request, signal),
          (cases, orphaned) =>
            model.start(
              { dbPath: request.dbPath, sessionId: request.sessionId, graders: graders.map((g) => g.name) },
              cases.length + orphaned,
            ),
        );
      },
    ),

    rerunFailedCases: command(vscode.l10n.t('Re-run Failed Cases'), [], async () => {
      notRunning(vscode.l10n.t('Re-run Failed Cases'));
      const failed = model.failedCases();
      if (!last || failed.length === 0) throw new UserFacingError(vscode.l10n.t('No case of the check failed.'));
      const { request, graders } = last;
      return runCases(
        vscode.l10n.t('Re-running {0} failed cases', failed.length),
        request,
        graders,
        async () => ({ cases: failed, orphaned: [] }),
        (cases) => model.restart(cases),
      );
    }),

    showCheckFailuresOnly: command(vscode.l10n.t('Show Failures Only'), [], () => setFilter(true)),
    showAllCheckCases: command(vscode.l10n.t('Show All Cases'), [], () => setFilter(false)),

    openCheckCaseAsComparison: command(vscode.l10n.t('Open as Comparison'), [arg.any, arg.flag], async (caseArg, confirmed) => {
      const title = vscode.l10n.t('Open as Comparison');
      notRunning(title);
      let result = caseOf(caseArg, title);
      const c = result.case;
      if (result.status === 'orphaned') throw new UserFacingError(vscode.l10n.t('The case {0} is orphaned: it did not run.', c.id));
      if (!last) throw new UserFacingError(vscode.l10n.t('Run a check first.'));
      const { request, graders } = last;
      // A check keeps no run (its scratch files are gone): the case runs again, once, on a branch of the file.
      if (!result.run?.branchId) {
        s.runner.checkCanRun(request.dbPath);
        if (!confirmed) {
          const go = vscode.l10n.t('Run and Keep Branch');
          const answer = await showWarningNotice(
            vscode.l10n.t('Run case {0} again and keep its run as a new branch of the session file?', c.id),
            {
              modal: true,
              detail: vscode.l10n.t(
                'The check wrote nothing to {0}. To compare the recorded turn with a new run, the case runs again through the same agent and its run is kept as a branch (check-N) of that file.',
                request.dbPath,
              ),
            },
            go,
          );
          if (answer !== go) return undefined;
        }
        const controller = new AbortController();
        running = controller;
        try {
          await withNoticeProgress(
            { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Running case {0} again', c.id), cancellable: true },
            async (_progress, token) => {
              token.onCancellationRequested(() => controller.abort());
              await runRequestCases(
                deps,
                request,
                { cases: [c], orphaned: [] },
                {
                  graders,
                  keepBranches: true,
                  signal: controller.signal,
                  onResult: (r) => model.add(r),
                  log: (line) => s.log.info(`check: ${line}`),
                },
              );
            },
          );
        } finally {
          running = undefined;
          view.refresh(true);
        }
        result = model.result(c.id) ?? result;
        if (!result.run?.branchId)
          throw new UserFacingError(
            vscode.l10n.t('The case {0} did not run again: {1}', c.id, result.error ?? vscode.l10n.t('it was stopped')),
          );
      }
      const base = { dbPath: request.dbPath, sessionId: c.sessionId };
      s.compare.open([
        { ...base, branchId: c.branchId, label: vscode.l10n.t('{0} (recorded)', c.branchId) },
        { ...base, branchId: result.run.branchId },
      ]);
      return summary();
    }),

    saveCheckExperiment: command(vscode.l10n.t('Save Check as Experiment…'), [arg.text, arg.flag], async (nameArg, replaceArg) => {
      const title = vscode.l10n.t('Save Check as Experiment…');
      canBeKept(title);
      const path = experimentsPath();
      const name =
        nameArg ??
        (await vscode.window.showInputBox({
          title,
          prompt: vscode.l10n.t('A name for this check (1 to 100 characters), to compare later checks with.'),
          validateInput: (v) => {
            try {
              checkExperimentName(v);
              return undefined;
            } catch (err) {
              return errorMessage(err);
            }
          },
        }));
      if (name === undefined) return undefined;
      if (dirname(path) === s.context.globalStorageUri.fsPath) mkdirSync(dirname(path), { recursive: true });
      const store = openExperiments(path, false);
      try {
        let force = replaceArg;
        if (!force && store.getExperiment(name.trim()) !== null) {
          const replace = vscode.l10n.t('Replace');
          const answer = await showWarningNotice(
            vscode.l10n.t('An experiment named "{0}" is saved already. Replace it?', name.trim()),
            { modal: true },
            replace,
          );
          if (answer !== replace) return undefined;
          force = true;
        }
        const saved = store.saveExperiment(name, model.report(), { force });
        void showInformationNotice(vscode.l10n.t('Saved the check as experiment "{0}" in {1}.', saved.name, path));
        return { ...summary(), saved: saved.name, path };
      } finally {
        store.close();
      }
    }),

    compareCheckWithExperiment: command(vscode.l10n.t('Compare Check with Experiment…'), [arg.text], async (nameArg) => {
      const title = vscode.l10n.t('Compare Check with Experiment…');
      canBeKept(title);
      const path = experimentsPath();
      const store = openExperiments(path, true);
      try {
        const saved = store.listExperiments();
        if (saved.length === 0) throw new UserFacingError(vscode.l10n.t('No experiment is saved in {0} yet.', path));
        const name =
          nameArg ??
          (
            await vscode.window.showQuickPick(
              saved.map((e) => ({
                label: plainIconText(e.name),
                description: totalsText(e),
                detail: plainIconText(
                  vscode.l10n.t('saved {0} · graders: {1}', new Date(e.savedMs).toLocaleString(), e.graders.join(', ')),
                ),
                name: e.name,
              })),
              { title, placeHolder: vscode.l10n.t('The baseline: flips are listed against it, regressions first') },
            )
          )?.name;
        if (name === undefined) return undefined;
        model.comparison = store.compareWithBaseline(name, model.report());
        view.refresh(true);
        await view.reveal();
        return summary();
      } finally {
        store.close();
      }
    }),
  };
}

/** The experiment store at `path`, or a refusal that names it and says why. */
function openExperiments(path: string, readonly: boolean): ExperimentStore {
  // Reading never creates the store: a missing one simply holds nothing yet.
  if (readonly && !existsSync(path)) throw new UserFacingError(vscode.l10n.t('No experiment is saved in {0} yet.', path));
  try {
    return ExperimentStore.open(path, readonly ? { readonly: true, fileMustExist: true } : {});
  } catch (err) {
    throw new UserFacingError(vscode.l10n.t('The experiment store {0} cannot be used: {1}', path, errorMessage(err)));
  }
}

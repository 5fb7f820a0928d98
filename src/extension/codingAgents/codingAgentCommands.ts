/**
 * *Ask Copilot about This Turn* (a turn node, the palette), *Ask Copilot about This Comparison* (the compare view's
 * title bar, the palette) and *Explain the Failure* (a failed tool call's node, a turn and its item, the palette):
 * each hands its turn or comparison to the chat (handOver.ts), for the user to send, and resolves with what it did.
 */
import * as vscode from 'vscode';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import type { ItemEntry } from '../../store/inspector/inspectorTypes';
import { failedReason, itemFacts } from '../../store/search/itemMatch';
import { asCompareTarget } from '../compare/compareCommands';
import { arg, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { pickSession } from '../databases/pickers';
import { turnItem } from '../databases/pickItems';
import { plainIconText } from '../core/iconText';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { asNode } from '../core/treeNodes';
import type { HandOverOutcome } from './handOver';
import { comparisonPrompt, failurePrompt, turnPrompt, type FailedCall, type TurnLocation } from './handOverPrompts';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** A turn (or item) node, or `{ dbPath, sessionId, branchId, turn, sequenceNumber? }` from a test or another extension. */
function turnOf(value: unknown): (TurnLocation & { sequenceNumber?: number }) | undefined {
  const node = asNode(value, 'turn', 'item');
  if (node)
    return {
      dbPath: node.dbPath,
      sessionId: node.sessionId,
      branchId: node.branchId,
      turn: node.turn,
      ...(node.kind === 'item' ? { sequenceNumber: node.sequenceNumber } : {}),
    };
  if (!isObj(value) || typeof value.dbPath !== 'string' || typeof value.sessionId !== 'string') return undefined;
  if (typeof value.branchId !== 'string' || !isInt(value.turn) || value.turn < 0) return undefined;
  return {
    dbPath: value.dbPath,
    sessionId: value.sessionId,
    branchId: value.branchId,
    turn: value.turn,
    ...(isInt(value.sequenceNumber) ? { sequenceNumber: value.sequenceNumber } : {}),
  };
}

/** From the palette: a session (pickSession), its current branch, and one of the branch's latest 200 turns. */
async function pickTurn(registry: DatabaseRegistry): Promise<TurnLocation | undefined> {
  const session = await pickSession(registry);
  if (!session) return undefined;
  const branchId = registry.currentBranch(session.dbPath, session.sessionId);
  const db = registry.require(session.dbPath).db;
  if (!db) return undefined;
  // The latest turns first: the one just run is the one usually asked about.
  const page = await db.getTurnsPageBefore(session.sessionId, branchId, { beforeTurn: null, limit: 200 });
  if (page.turns.length === 0) throw new UserFacingError(vscode.l10n.t('Branch {0} of {1} has no turns.', branchId, session.sessionId));
  const pick = await vscode.window.showQuickPick(
    [...page.turns].reverse().map((t) => ({ ...turnItem(t), turn: t.turn })),
    { title: vscode.l10n.t('Turn of {0} ({1})', session.sessionId, branchId) },
  );
  return pick ? { ...session, branchId, turn: pick.turn } : undefined;
}

/** The failed tool calls among a turn's items (outputs with an error, calls with a failed status). */
function failedCalls(items: readonly ItemEntry[]): (FailedCall & { callId: string | null })[] {
  return items.flatMap((e) => {
    if (e.corrupt) return [];
    const reason = failedReason(e.item);
    if (reason === null) return [];
    const facts = itemFacts(e.item);
    return [{ sequenceNumber: e.sequenceNumber, toolName: e.toolName ?? facts.toolName ?? e.type ?? 'tool', reason, callId: facts.callId }];
  });
}

/**
 * The failed call to explain in `turn`: the item `sequenceNumber` names (a call whose output failed counts as
 * failed), else the turn's only failed call, else the one the user picks. Throws when there is none.
 */
async function failedCallOf(
  registry: DatabaseRegistry,
  turn: TurnLocation,
  sequenceNumber: number | undefined,
): Promise<FailedCall | undefined> {
  const entry = registry.require(turn.dbPath);
  if (!entry.db) throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} cannot be read.', turn.dbPath));
  const items = await entry.db.getTurnItems(turn.sessionId, turn.branchId, turn.turn);
  const failed = failedCalls(items);
  if (sequenceNumber !== undefined) {
    const item = items.find((e) => e.sequenceNumber === sequenceNumber);
    if (!item) throw new UserFacingError(vscode.l10n.t('The item is no longer in the database; refresh the view.'));
    const callId = item.corrupt ? null : itemFacts(item.item).callId;
    const hit =
      failed.find((f) => f.sequenceNumber === sequenceNumber) ?? (callId !== null ? failed.find((f) => f.callId === callId) : undefined);
    if (!hit) throw new UserFacingError(vscode.l10n.t('Item {0} of turn {1} is not a failed tool call.', sequenceNumber, turn.turn));
    return hit;
  }
  if (failed.length === 0) throw new UserFacingError(vscode.l10n.t('Turn {0} has no failed tool call.', turn.turn));
  if (failed.length === 1) return failed[0];
  return (
    await vscode.window.showQuickPick(
      failed.map((f) => ({
        label: plainIconText(f.toolName),
        description: plainIconText(f.reason),
        detail: vscode.l10n.t('Item {0}', f.sequenceNumber),
        f,
      })),
      { title: vscode.l10n.t('Failed tool call of turn {0}', turn.turn) },
    )
  )?.f;
}

/**
 * The comparison the command is about: the targets passed (a list), else the active compare view's, or the only one
 * open (the view's title bar passes the editor's resource, not a list).
 */
function comparisonOf(s: Services, value: unknown, title: string): CompareTarget[] {
  if (Array.isArray(value)) {
    const list = value.map(asCompareTarget);
    if (list.length < 2 || list.some((t) => t === undefined))
      badArgument(title, vscode.l10n.t('branches ({ dbPath, sessionId, branchId })'));
    return list as CompareTarget[];
  }
  const open = s.compare.all();
  const panel = open.find((p) => p.panel.active) ?? (open.length === 1 ? open[0] : undefined);
  if (!panel) throw new UserFacingError(vscode.l10n.t('No comparison is open. Run "Compare with…" on a branch first.'));
  return [...panel.targets];
}

export function codingAgentCommands(s: Services): CommandsOf<'askAboutTurn' | 'askAboutComparison' | 'explainFailure'> {
  const askTurn = vscode.l10n.t('Ask Copilot about This Turn');
  const explain = vscode.l10n.t('Explain the Failure');
  return {
    askAboutTurn: command(askTurn, [arg.any], async (value): Promise<HandOverOutcome | undefined> => {
      const turn = value === undefined ? await pickTurn(s.registry) : (turnOf(value) ?? badArgument(askTurn, vscode.l10n.t('a turn')));
      return turn ? s.codingAgents.handOver.open(turnPrompt(turn)) : undefined;
    }),
    askAboutComparison: command(vscode.l10n.t('Ask Copilot about This Comparison'), [arg.any], (value) =>
      s.codingAgents.handOver.open(comparisonPrompt(comparisonOf(s, value, vscode.l10n.t('Ask Copilot about This Comparison')))),
    ),
    explainFailure: command(explain, [arg.any, arg.any], async (value, itemArg): Promise<HandOverOutcome | undefined> => {
      const turn: (TurnLocation & { sequenceNumber?: number }) | undefined =
        value === undefined ? await pickTurn(s.registry) : (turnOf(value) ?? badArgument(explain, vscode.l10n.t('a failed tool call')));
      if (!turn) return undefined;
      const item = isInt(itemArg)
        ? itemArg
        : isObj(itemArg) && isInt(itemArg.sequenceNumber)
          ? itemArg.sequenceNumber
          : turn.sequenceNumber;
      const call = await failedCallOf(s.registry, turn, item);
      // A complete question, still left for the user to send: agent mode acts on what it is sent.
      return call ? s.codingAgents.handOver.open(failurePrompt(turn, call)) : undefined;
    }),
  };
}

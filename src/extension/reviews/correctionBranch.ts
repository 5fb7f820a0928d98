/**
 * *Continue from this answer* (docs/reviews.md): a correction becomes a branch when the user asks. The branch forks
 * before the corrected turn and gets that turn again — its user message, the items before the corrected answer (tool
 * calls and their outputs), then the correction as the assistant's message — so the composer continues from the
 * answer it should have given. The original branch and the correction stay as they were: the history is not rewritten.
 */
import * as vscode from 'vscode';
import type { SessionReader } from '../../store/inspector/sessionReader';
import { contentKey } from '../../store/reviews/contentKey';
import { turnKeyOf } from '../../store/reviews/reviewMatching';
import { correctedItem } from '../../store/reviews/correctedItem';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { branchNameProblem } from '../../shared/branchNames';
import { askBranchName, usedBranchIds } from '../branches/branchActions';
import { UserFacingError } from '../core/userError';
import { announce } from '../core/outcomes';

type ItemReader = Pick<SessionReader, 'getTurnItems'>;

export interface CorrectionBranchRequest {
  /** The branch shown, forked from. */
  fromBranchId: string;
  /** The corrected turn's `branch_turn_number` on `fromBranchId` (the fork goes before it). */
  branchTurnNumber: number;
  /** The branch that ran the turn (where the correction is kept). */
  ranOn: string;
  turn: number;
  itemIndex: number;
  /** The new branch's name; asked for when not given. */
  name?: string;
}

/** Makes the branch and returns its id; undefined when the user cancelled the name. */
export async function branchFromCorrection(
  registry: DatabaseRegistry,
  reader: ItemReader,
  store: WorkerReviewStore,
  target: SessionRef,
  req: CorrectionBranchRequest,
): Promise<string | undefined> {
  const items = await reader.getTurnItems(target.sessionId, req.ranOn, req.turn);
  const user = items.find((i) => !i.corrupt && (i.item as { role?: unknown }).role === 'user');
  const answer = items[req.itemIndex];
  if (!user || user.corrupt || !answer || answer.corrupt)
    throw new UserFacingError(vscode.l10n.t('Turn {0} of {1} cannot be read: no branch was made.', req.turn, req.ranOn));
  const turnKey = turnKeyOf(user.item);
  const itemKey = contentKey(answer.item);
  const kept = (await store.call('corrections', target.sessionId, req.ranOn)).find(
    (c) => c.turn === req.turn && c.turnKey === turnKey && c.itemKey === itemKey,
  );
  if (!kept)
    throw new UserFacingError(vscode.l10n.t('Item {0} of turn {1} has no correction to continue from.', req.itemIndex + 1, req.turn));
  const before = items.slice(items.indexOf(user), req.itemIndex).flatMap((i) => (i.corrupt ? [] : [i.item]));
  const used = await usedBranchIds(registry, target);
  let suggestion = `corrected-${req.turn}`;
  for (let n = 2; used.has(suggestion); n++) suggestion = `corrected-${req.turn}-${n}`;
  const name =
    req.name ?? (await askBranchName(registry, target, suggestion, { fromBranchId: req.fromBranchId, turn: req.branchTurnNumber }));
  if (name === undefined) return undefined;
  const problem = branchNameProblem(name, used);
  if (problem) throw new UserFacingError(problem);
  const branchId = await registry.batch(() =>
    registry.withWritableSession(target.dbPath, target.sessionId, req.fromBranchId, async (s) => {
      const id = await s.createBranchFromTurn(req.branchTurnNumber, name);
      try {
        await s.addItems([...before, correctedItem(answer.item, kept.text)] as never);
      } catch (err) {
        // The fork and its turn are two writes: a turn that could not be written takes its empty branch with it.
        await s.deleteBranch(id).catch(() => undefined);
        throw err;
      }
      registry.setCurrentBranch(target.dbPath, target.sessionId, id);
      return id;
    }),
  );
  announce(
    vscode.l10n.t(
      "Created branch '{0}': turn {1} again, ending with the corrected answer. It is the current branch here: the composer continues from it.",
      branchId,
      req.turn,
    ),
  );
  return branchId;
}

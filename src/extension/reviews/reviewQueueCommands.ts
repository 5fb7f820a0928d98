/** The review queue's commands (reviewQueue.ts holds the queue itself). */
import * as vscode from 'vscode';
import { arg, argOrInput } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import type { Services } from '../services';
import { searchQueryProblem } from '../search/searchCommands';

/** *Review Next* (a query starts a queue; without one, the queue goes on or asks for one) and *Stop Review Queue*. */
export function reviewQueueCommands(s: Services): CommandsOf<'reviewNext' | 'stopReviewQueue'> {
  const queue = s.reviewQueue;
  return {
    reviewNext: command(vscode.l10n.t('Review Next'), [arg.text], async (given) => {
      if (given === undefined && queue.active) return queue.next();
      const text = await argOrInput(given, {
        title: vscode.l10n.t('Review Next: which turns?'),
        prompt: vscode.l10n.t('A search query; its turns are shown one by one. G or B in the view gives the verdict and goes on.'),
        placeHolder: vscode.l10n.t('e.g. reviewed:no   is:failed reviewed:no   tool:refund   is:bad tag:wrong-tool'),
        value: queue.state.query || 'reviewed:no',
        validateInput: searchQueryProblem,
      });
      if (text === undefined || text.trim() === '') return undefined;
      return queue.start(text);
    }),
    stopReviewQueue: command(vscode.l10n.t('Stop Review Queue'), [], () => {
      queue.stop();
      return queue.state;
    }),
  };
}

/** *Set Pricing Model…*: from the palette, or a session or branch in the tree. */
import * as vscode from 'vscode';
import { arg } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { pickSession } from '../databases/pickers';
import type { Services } from '../services';
import { choosePricingModel } from './pricingChoice';

export function pricingCommands(s: Services): CommandsOf<'setPricingModel'> {
  return {
    setPricingModel: command(
      vscode.l10n.t('Set Pricing Model'),
      [arg.optionalNode(() => vscode.l10n.t('a session'), 'session', 'branch'), arg.any],
      async (node, modelArg) => {
        const target = node ? { dbPath: node.dbPath, sessionId: node.sessionId } : await pickSession(s.registry);
        if (!target) return undefined;
        return choosePricingModel(s.pricing, target, modelArg);
      },
    ),
  };
}

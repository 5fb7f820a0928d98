/** Choosing the model a session is priced as: *Set Pricing Model…* and the Tokens tab of the conversation view. */
import * as vscode from 'vscode';
import { pricedModels, type ModelPrice } from '../../shared/pricing';
import { Setting } from '../core/contributions';
import type { SessionPricing } from './sessionPricing';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { setting } from '../core/settings';
import { plainIconText } from '../core/iconText';

const rates = (p: ModelPrice): string =>
  p.cachedInput === null
    ? vscode.l10n.t('${0} input · no cached rate · ${1} output per 1M tokens', p.input, p.output)
    : vscode.l10n.t('${0} input · ${1} cached · ${2} output per 1M tokens', p.input, p.cachedInput, p.output);

/**
 * Asks which model to price a session as: the table's models, the configured agent model (forgetting the choice), or
 * another name typed in (an unknown one shows tokens only). `modelArg` (tests, keybindings) skips the questions.
 * Returns the model now in force, or undefined when cancelled.
 */
export async function choosePricingModel(pricing: SessionPricing, ref: SessionRef, modelArg?: unknown): Promise<string | null | undefined> {
  if (typeof modelArg === 'string') {
    await pricing.setModel(ref, modelArg);
    return pricing.modelFor(ref);
  }
  const { table, model: current } = pricing.pricingFor(ref);
  const configured = setting(Setting.agentModel);
  type Pick = vscode.QuickPickItem & { model?: string | null; other?: boolean };
  const items: Pick[] = [
    ...pricedModels(table).map((m): Pick => {
      const p = table.prices[m] as ModelPrice;
      return { label: plainIconText(m), description: m === current ? vscode.l10n.t('current') : undefined, detail: rates(p), model: m };
    }),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    {
      label: `$(settings) ${configured ? plainIconText(vscode.l10n.t('The configured agent model ({0})', configured)) : vscode.l10n.t('The configured agent model')}`,
      model: null,
    },
    { label: `$(edit) ${vscode.l10n.t('Other model…')}`, other: true },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Pricing model of {0}', ref.sessionId),
    placeHolder: vscode.l10n.t('Prices of {0} ({1})', table.date, table.source),
    matchOnDetail: true,
  });
  if (!pick) return undefined;
  let model = pick.model ?? null;
  if (pick.other) {
    const typed = await vscode.window.showInputBox({
      title: vscode.l10n.t('Pricing model of {0}', ref.sessionId),
      prompt: vscode.l10n.t('A model name; one the price table does not know shows tokens only (add it in agentSessions.pricing.prices).'),
      value: current ?? '',
    });
    if (typed === undefined) return undefined;
    model = typed.trim() || null;
  }
  await pricing.setModel(ref, model);
  return pricing.modelFor(ref);
}

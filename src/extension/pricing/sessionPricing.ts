/**
 * Which model each session is priced as, and the price table in force. The file records no model per turn, so the
 * user chooses one per session (remembered in workspace state); until then the configured agent model
 * (`agentSessions.agent.model`) is assumed. The table is the built-in one with `agentSessions.pricing.prices` over it.
 */
import * as vscode from 'vscode';
import { BUILT_IN_PRICES, priceOf, withOverrides, type ModelPrice, type PriceTable } from '../../shared/pricing';
import { Setting } from '../core/contributions';
import { affectsSetting, setting } from '../core/settings';
import { sessionKey, type SessionRef } from '../../shared/protocol/sessionRef';

/** The workspace-state key of the per-session models: one record, keyed by `sessionKey`. */
const STATE_KEY = 'agentSessions.pricingModels';

/** How a session is priced. `price` null: the table has no price for `model` (or there is no model): tokens only. */
export interface SessionPrice {
  model: string | null;
  price: ModelPrice | null;
  table: PriceTable;
}

/** What changed: one session's model (`ref`), or (undefined) the table or the default model, which touch every session. */
export type PricingChange = SessionRef | undefined;

export class SessionPricing implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<PricingChange>();
  /** Fires when a session's pricing model, the default model or the price table changes. */
  readonly onDidChange = this.emitter.event;
  private cached: PriceTable | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly state: vscode.Memento,
    private readonly log?: vscode.LogOutputChannel,
  ) {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!affectsSetting(e, Setting.pricingPrices) && !affectsSetting(e, Setting.agentModel)) return;
      this.cached = undefined;
      this.emitter.fire(undefined);
    });
  }

  /** The price table in force: built in, with the setting's valid entries over it (bad ones are logged, once per change). */
  table(): PriceTable {
    if (this.cached) return this.cached;
    const { table, problems } = withOverrides(BUILT_IN_PRICES, setting(Setting.pricingPrices));
    for (const p of problems) this.log?.warn(p);
    this.cached = table;
    return table;
  }

  /** The model the session is priced as: the one chosen for it, else the configured agent model (null: none). */
  modelFor(ref: SessionRef): string | null {
    const chosen = this.models()[sessionKey(ref.dbPath, ref.sessionId)];
    if (typeof chosen === 'string' && chosen.trim()) return chosen;
    const configured = setting(Setting.agentModel);
    return typeof configured === 'string' && configured.trim() ? configured.trim() : null;
  }

  pricingFor(ref: SessionRef): SessionPrice {
    const table = this.table();
    const model = this.modelFor(ref);
    return { model, price: priceOf(table, model), table };
  }

  /** Remembers the model to price a session as; null forgets it (back to the configured agent model). */
  async setModel(ref: SessionRef, model: string | null): Promise<void> {
    const models = { ...this.models() };
    const key = sessionKey(ref.dbPath, ref.sessionId);
    const name = model?.trim() || null;
    if (name === null) delete models[key];
    else models[key] = name;
    await this.state.update(STATE_KEY, models);
    this.emitter.fire({ dbPath: ref.dbPath, sessionId: ref.sessionId });
  }

  private models(): Record<string, unknown> {
    const value = this.state.get<unknown>(STATE_KEY);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

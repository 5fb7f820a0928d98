/**
 * Which nodes of the Sessions tree the user left expanded, kept in the workspace's state, so a reload (or a restart)
 * shows the tree as it was instead of collapsing it to the databases. VS Code keeps no expansion of an extension's
 * tree across a reload by itself; the ids are the tree's node ids (core/treeNodes.ts `nodeId`), stable across reads.
 * No vscode import: the tree wires the view's expand and collapse events to it (sessionTree.ts).
 */

/** The part of a `vscode.Memento` this uses (the extension's workspaceState). */
export interface ExpansionStore {
  get<T>(key: string, defaultValue: T): T;
  update(key: string, value: unknown): Thenable<void>;
}

const KEY = 'agentSessions.tree.expanded';

/**
 * At most this many ids are kept, the most recently expanded last: a bound on what the workspace state holds (a tree
 * expanded far down pages of turns would otherwise add ids forever). The oldest are forgotten first.
 */
export const MAX_EXPANDED_NODES = 500;

export class ExpandedNodes {
  private readonly ids: string[];

  constructor(private readonly store: ExpansionStore) {
    const saved = store.get<unknown>(KEY, []);
    // The state is ours, but a damaged or older value must not break the tree: keep only strings, within the bound.
    this.ids = Array.isArray(saved) ? saved.filter((v): v is string => typeof v === 'string').slice(-MAX_EXPANDED_NODES) : [];
  }

  has(id: string): boolean {
    return this.ids.includes(id);
  }

  expanded(id: string): void {
    this.forget(id);
    this.ids.push(id);
    if (this.ids.length > MAX_EXPANDED_NODES) this.ids.splice(0, this.ids.length - MAX_EXPANDED_NODES);
    void this.save();
  }

  collapsed(id: string): void {
    if (this.forget(id)) void this.save();
  }

  private forget(id: string): boolean {
    const at = this.ids.indexOf(id);
    if (at < 0) return false;
    this.ids.splice(at, 1);
    return true;
  }

  private save(): Thenable<void> {
    return this.store.update(KEY, [...this.ids]);
  }
}

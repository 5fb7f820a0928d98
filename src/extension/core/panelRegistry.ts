import * as vscode from 'vscode';

/** What the registry needs of a panel (a `PanelHost`): its webview panel, and word when it is gone. */
export interface OpenPanel {
  readonly panel: vscode.WebviewPanel;
  readonly onDidDispose: vscode.Event<void>;
}

/**
 * The open panels of one view type. Opening what an open panel already shows reveals that panel instead of a second
 * one; `keyOf` says what a panel shows, read each time, since it can change (a compare column swapped). A panel leaves
 * the registry when it is disposed, and disposing the registry closes every panel it holds.
 */
export abstract class PanelRegistry<P extends OpenPanel> implements vscode.Disposable {
  private readonly panels = new Set<P>();
  private serializer: vscode.Disposable | undefined;

  /**
   * `column`: where a new panel opens. A comparison opens beside the active editor (the conversation view it was
   * asked from stays in sight); a conversation view takes the active editor's place.
   */
  constructor(
    private readonly viewType: string,
    private readonly column: vscode.ViewColumn = vscode.ViewColumn.Active,
  ) {}

  /** What `panel` shows, as a key: two panels with one key would show the same thing. */
  protected abstract keyOf(panel: P): string;

  /** The open panel with `key`, if any. */
  protected find(key: string): P | undefined {
    for (const p of this.panels) if (this.keyOf(p) === key) return p;
    return undefined;
  }

  /**
   * The open panel with `key`, shown again by `show`; else a new panel, titled `title` until its page is written,
   * made by `create` in a new webview panel in the registry's column.
   */
  protected showOrCreate(key: string, title: string, create: (panel: vscode.WebviewPanel) => P, show: (existing: P) => void): P {
    const existing = this.find(key);
    if (existing) {
      show(existing);
      return existing;
    }
    // The panel host sets the page's options (scripts, local resource roots) before it writes the page.
    return this.add(create(vscode.window.createWebviewPanel(this.viewType, title, this.column, { enableScripts: true })));
  }

  /**
   * Brings this view type's panels back after a window reload: `restore` makes a panel of the state its page saved,
   * or returns undefined for a state it does not recognise (that webview panel is then closed).
   */
  protected restoreWith(restore: (panel: vscode.WebviewPanel, state: unknown) => Promise<P | undefined>): void {
    this.serializer?.dispose();
    this.serializer = vscode.window.registerWebviewPanelSerializer(this.viewType, {
      deserializeWebviewPanel: async (panel, state: unknown) => {
        const restored = await restore(panel, state);
        if (restored) this.add(restored);
        else panel.dispose();
      },
    });
  }

  private add(panel: P): P {
    this.panels.add(panel);
    panel.onDidDispose(() => this.panels.delete(panel));
    return panel;
  }

  /** Every open panel (tests and the benchmark look at them). */
  all(): P[] {
    return [...this.panels];
  }

  dispose(): void {
    for (const p of this.panels) p.panel.dispose();
    this.serializer?.dispose();
  }
}

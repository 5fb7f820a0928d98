/**
 * *Open as JSON*: an item, a turn or a branch as a read-only JSON document in an ordinary editor tab, so VS Code's own
 * find, folding, outline and copy work on it. The documents come from a `TextDocumentContentProvider` of our own
 * scheme: nothing is written to disk, and the text is read from the store each time VS Code asks (and again when the
 * database changes while the tab is open).
 */
import type { SessionRef } from '../../shared/protocol/sessionRef';
import * as vscode from 'vscode';
import type { ContentRef } from '../../shared/protocol/conversation';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { entryJson, MAX_DOCUMENT_ITEMS, readContent } from './sessionContent';

export const JSON_SCHEME = 'agent-session-json';

/** What a document's URI names: the session, and the item, turn or branch in it. */
export interface JsonDocumentRef extends SessionRef, ContentRef {}

/**
 * The URI of a document: the path is only the tab's title (session / branch / turn / item, ending in `.json` so the
 * JSON language mode applies); the query holds the reference itself, so a title never has to be parsed back.
 */
export function jsonDocumentUri(ref: JsonDocumentRef): vscode.Uri {
  const parts = [ref.sessionId, ref.branchId];
  if (ref.turn !== null) parts.push(`turn ${ref.turn}`);
  if (ref.sequenceNumber !== null) parts.push(`item ${ref.sequenceNumber}`);
  // A slash inside a session or branch id would add a path level to the title only; the query stays exact.
  const title = parts.map((p) => p.replace(/[/\\]/g, '∕')).join(' · ');
  const query = JSON.stringify([ref.dbPath, ref.sessionId, ref.branchId, ref.turn, ref.sequenceNumber]);
  return vscode.Uri.from({ scheme: JSON_SCHEME, path: `/${title}.json`, query });
}

/** The reference in a document's URI; throws for a URI this provider did not make. */
export function parseJsonDocumentUri(uri: vscode.Uri): JsonDocumentRef {
  const bad = (): never => {
    throw new Error(`Not an Agent Sessions JSON document: ${uri.toString(true).slice(0, 200)}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(uri.query);
  } catch {
    return bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) return bad();
  const [dbPath, sessionId, branchId, turn, sequenceNumber] = parsed as unknown[];
  const intOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isInteger(v));
  if (typeof dbPath !== 'string' || typeof sessionId !== 'string' || typeof branchId !== 'string') return bad();
  if (!intOrNull(turn) || !intOrNull(sequenceNumber)) return bad();
  return { dbPath, sessionId, branchId, turn: turn as number | null, sequenceNumber: sequenceNumber as number | null };
}

/**
 * The document's text. An item is the stored item itself (what a user copies into a test or a bug report); a turn
 * and a branch are the items in order with where they come from, and a branch cut at `MAX_DOCUMENT_ITEMS` says so.
 */
export async function jsonDocumentText(registry: DatabaseRegistry, ref: JsonDocumentRef): Promise<string> {
  const { entries, truncated } = await readContent(registry, ref, ref);
  if (ref.sequenceNumber !== null) return entryJson(entries[0]!) + '\n';
  // Rows whose JSON does not decode are kept as the text they hold, marked, so nothing is hidden.
  const items = entries.map((e) => (e.corrupt ? { unreadableRow: e.raw, error: e.error, sequenceNumber: e.sequenceNumber } : e.item));
  const doc: Record<string, unknown> = {
    session: ref.sessionId,
    branch: ref.branchId,
    ...(ref.turn !== null ? { turn: ref.turn } : {}),
    items,
  };
  if (truncated)
    doc.truncated = vscode.l10n.t(
      'The first {0} items of the branch; export the branch to get all of them.',
      MAX_DOCUMENT_ITEMS.toLocaleString('en-US'),
    );
  return JSON.stringify(doc, null, 2) + '\n';
}

/** The provider: registered once; documents of a database refresh when it changes. */
export class JsonDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly registry: DatabaseRegistry) {
    this.subscriptions = [
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(JSON_SCHEME, this),
      registry.onDidChange((change) => {
        for (const doc of vscode.workspace.textDocuments) {
          if (doc.uri.scheme !== JSON_SCHEME) continue;
          if (change.kind === 'current-branch') continue;
          if (change.kind !== 'list' && parseJsonDocumentUri(doc.uri).dbPath !== change.path) continue;
          this.changed.fire(doc.uri);
        }
      }),
    ];
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return jsonDocumentText(this.registry, parseJsonDocumentUri(uri));
  }

  /** Opens the document in a tab (a preview tab, like a file opened from the explorer). */
  async open(ref: JsonDocumentRef): Promise<vscode.TextEditor> {
    // Reading first turns a missing item or a closed database into a clear message instead of an empty tab.
    await jsonDocumentText(this.registry, ref);
    const doc = await vscode.workspace.openTextDocument(jsonDocumentUri(ref));
    return vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}

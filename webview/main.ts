/**
 * The conversation view: branch map, the selected branch's turns (virtualized), the selected turn's items, and
 * token and tool tables. It draws only what the host sends; every snapshot replaces the previous one.
 */
import type { ItemView, SnapshotView, TablesView, TurnView } from '../src/shared/viewModels';
import { renderBranchMap } from './components/branchMap';
import { Composer } from './components/composer';
import { renderToolTable, renderUsageTable } from './components/tables';
import { renderTurnDetail } from './components/turnDetail';
import { TurnList } from './components/turnList';
import { el, replaceChildren } from './dom';
import { branchAtFork } from './logic/branchLayout';
import { onRunEvent, onSnapshot, post, request, state } from './messenger';
import { registerToolkit } from './ui/toolkit';
import { errorMessage } from '../src/shared/errorMessage';
import { MAX_TURN_REQUEST, VIEW_TURN_PAGE } from '../src/shared/pageSizes';

// Time origin of the first-screen measurement: this script starts as the panel becomes ready.
const started = performance.now();
registerToolkit();

interface ViewState {
  snapshot: SnapshotView | undefined;
  branchId: string;
  turns: TurnView[];
  nextAfterTurn: number | null;
  /** The page being loaded, if any: loads wait for it instead of polling. */
  pageInFlight: Promise<void> | undefined;
  items: ItemView[] | string | undefined;
  tablesScope: 'branch' | 'session';
  firstScreenReported: boolean;
}
const view: ViewState = {
  snapshot: undefined,
  branchId: 'main',
  turns: [],
  nextAfterTurn: null,
  pageInFlight: undefined,
  items: undefined,
  tablesScope: 'branch',
  firstScreenReported: false,
};

// ---- layout --------------------------------------------------------------------------------------------------
const app = document.getElementById('app') as HTMLElement;
const title = el('h1', { class: 'title' });
const badges = el('span', { class: 'badges' });
const actions = el('div', { class: 'actions' });
const banner = el('div', { class: 'banner', role: 'alert' });
const mapSlot = el('div', { class: 'map-slot' });
const detail = el('section', { class: 'turn-detail', 'aria-label': 'Selected turn', tabindex: -1 });
const usageSlot = el('div', { class: 'usage-slot' });
const toolSlot = el('div', { class: 'tool-slot' });
const scopeButtons = el('div', { class: 'scope', role: 'radiogroup', 'aria-label': 'Table scope' });

const turnList = new TurnList({
  onSelect: (i) => void selectTurn(i),
  onOpen: (i) => {
    void selectTurn(i).then(() => detail.focus());
  },
  onFork: (direction) => void fork(direction),
  onNeedMore: () => void loadMore(),
  onEnd: () => {
    void (async () => {
      while (view.nextAfterTurn !== null) await loadMore(MAX_TURN_REQUEST);
      turnList.select(view.turns.length - 1);
      await selectTurn(view.turns.length - 1);
    })();
  },
});

let runId: string | undefined;
let selectLastTurn = false;
const composer = new Composer({
  send: async (input) => {
    const started = await request('run/start', { branchId: view.branchId, input });
    runId = started.runId;
  },
  stop: async () => {
    if (runId) await request('run/stop', { runId });
  },
});
onRunEvent((e) => {
  composer.show(e);
  // When the run has written its turn, the next snapshot shows it: select it.
  if (e.kind === 'run/completed' || e.kind === 'run/failed') selectLastTurn = true;
});

const panels = el(
  'vscode-panels',
  { class: 'tabs', 'aria-label': 'Conversation view' },
  el('vscode-panel-tab', { id: 'tab-conversation' }, 'Conversation'),
  el('vscode-panel-tab', { id: 'tab-tokens' }, 'Tokens'),
  el('vscode-panel-tab', { id: 'tab-tools' }, 'Tools'),
  el(
    'vscode-panel-view',
    { id: 'view-conversation' },
    el('div', { class: 'conversation' }, mapSlot, turnList.element, el('div', { class: 'detail-column' }, detail, composer.element)),
  ),
  el('vscode-panel-view', { id: 'view-tokens' }, el('div', { class: 'tables' }, scopeButtons, usageSlot)),
  el('vscode-panel-view', { id: 'view-tools' }, el('div', { class: 'tables' }, toolSlot)),
);
panels.addEventListener('change', () => void loadTables());
replaceChildren(app, el('header', { class: 'header' }, title, badges, actions), banner, panels);

for (const scope of ['branch', 'session'] as const) {
  const b = el(
    'vscode-button',
    { appearance: scope === 'branch' ? 'primary' : 'secondary', 'data-scope': scope, role: 'radio' },
    scope === 'branch' ? 'This branch' : 'Whole session',
  );
  b.addEventListener('click', () => {
    view.tablesScope = scope;
    for (const other of Array.from(scopeButtons.children)) other.setAttribute('appearance', other === b ? 'primary' : 'secondary');
    void loadTables();
  });
  scopeButtons.appendChild(b);
}

// ---- behaviour -----------------------------------------------------------------------------------------------
function showError(message: string | undefined): void {
  banner.textContent = message ?? '';
  banner.classList.toggle('visible', !!message);
}

function openLink(url: string): void {
  post({ kind: 'link/open', url });
}

function selectedTurn(): TurnView | undefined {
  return view.turns[turnList.selectedIndex];
}

function renderDetail(): void {
  const s = view.snapshot;
  const canBranch = !!s && !s.readonly;
  renderTurnDetail(detail, selectedTurn(), view.items, canBranch, new Set(s?.usedBranchIds ?? []), {
    openLink,
    branchHere: async (turn, name) => {
      try {
        await request('branch/create', { fromBranchId: view.branchId, branchTurnNumber: turn.branchTurnNumber as number, name });
        return undefined; // the host sends a new snapshot with the branch selected
      } catch (err) {
        return errorMessage(err);
      }
    },
  });
}

async function selectTurn(index: number): Promise<void> {
  const turn = view.turns[index];
  if (!turn) return;
  view.items = undefined;
  renderDetail();
  const branch = view.branchId;
  try {
    const items = await request('turn/items', { branchId: branch, turn: turn.turn });
    if (view.branchId === branch && selectedTurn() === turn) view.items = items;
  } catch (err) {
    view.items = errorMessage(err);
  }
  renderDetail();
  saveState();
}

async function loadMore(limit = VIEW_TURN_PAGE): Promise<void> {
  if (view.nextAfterTurn === null) return;
  // One page at a time: a second caller waits for the page in flight instead of requesting it again.
  while (view.pageInFlight) await view.pageInFlight;
  if (view.nextAfterTurn === null) return;
  view.pageInFlight = loadPage(view.nextAfterTurn, limit).finally(() => (view.pageInFlight = undefined));
  await view.pageInFlight;
}

/** Requests the page after `afterTurn` and appends it, unless the user moved to another branch meanwhile. */
async function loadPage(afterTurn: number, limit: number): Promise<void> {
  const branch = view.branchId;
  try {
    const page = await request('turns/get', { branchId: branch, afterTurn, limit });
    if (view.branchId !== branch) return;
    view.turns = view.turns.concat(page.turns);
    view.nextAfterTurn = page.nextAfterTurn;
    drawTurns();
  } catch (err) {
    showError(errorMessage(err));
  }
}

/** Loads pages until `turn` is loaded (or the branch ends); returns its index or -1. */
async function loadUntil(turn: number): Promise<number> {
  for (;;) {
    const i = view.turns.findIndex((t) => t.turn === turn);
    if (i >= 0) return i;
    const last = view.turns[view.turns.length - 1];
    if (view.nextAfterTurn === null || (last && last.turn > turn)) return -1;
    await loadMore();
  }
}

function drawTurns(): void {
  const b = view.snapshot?.branches.find((x) => x.branchId === view.branchId);
  turnList.set(view.turns, view.nextAfterTurn !== null, `Turns of branch ${view.branchId}${b ? ` (${b.userTurns})` : ''}`);
}

async function showBranch(branchId: string, keepTurn?: number): Promise<void> {
  const s = view.snapshot;
  if (!s) return;
  view.branchId = branchId;
  post({ kind: 'selection/set', branchId });
  view.turns = [];
  view.nextAfterTurn = null;
  view.items = undefined;
  renderHeader();
  renderMap();
  try {
    const page = await request('turns/get', { branchId, afterTurn: null, limit: VIEW_TURN_PAGE });
    if (view.branchId !== branchId) return;
    view.turns = page.turns;
    view.nextAfterTurn = page.nextAfterTurn;
  } catch (err) {
    showError(errorMessage(err));
  }
  drawTurns();
  const index = keepTurn !== undefined ? await loadUntil(keepTurn) : 0;
  turnList.select(Math.max(0, index));
  await selectTurn(Math.max(0, index));
  void loadTables();
}

async function fork(direction: 'left' | 'right'): Promise<void> {
  const s = view.snapshot;
  const turn = selectedTurn();
  if (!s || !turn) return;
  const target = branchAtFork(s.branches, view.branchId, turn.turn, direction);
  if (target) await showBranch(target, turn.turn);
}

function renderHeader(): void {
  const s = view.snapshot;
  if (!s) return;
  title.textContent = `${s.sessionId} · ${s.dbName}`;
  replaceChildren(badges, s.readonly ? el('vscode-badge', { title: 'Opened read-only: nothing is written' }, 'read-only') : null);
  const b = s.branches.find((x) => x.branchId === view.branchId);
  const switchButton = el(
    'vscode-button',
    { appearance: 'secondary', class: 'switch-branch', disabled: !b || b.isCurrent },
    b?.isCurrent ? `${view.branchId} is current` : `Switch to ${view.branchId}`,
  );
  switchButton.addEventListener('click', () => {
    request('branch/switch', { branchId: view.branchId }).catch((err: unknown) => showError(errorMessage(err)));
  });
  const deleteButton = el(
    'vscode-button',
    { appearance: 'secondary', class: 'delete-branch', disabled: s.readonly || view.branchId === 'main' || !b },
    `Delete ${view.branchId}`,
  );
  deleteButton.addEventListener('click', () => {
    request('branch/delete', { branchId: view.branchId }).catch((err: unknown) => showError(errorMessage(err)));
  });
  replaceChildren(actions, switchButton, deleteButton);
  composer.setEnabled(
    !s.readonly && !s.problem && !!b,
    view.branchId,
    s.readonly ? 'Read-only: open it writable to continue the conversation.' : undefined,
  );
}

function renderMap(): void {
  const s = view.snapshot;
  if (!s) return;
  replaceChildren(
    mapSlot,
    renderBranchMap(s.branches, view.branchId, (id) => void showBranch(id)),
  );
}

async function loadTables(): Promise<void> {
  // The property, not the attribute: FAST reflects it to the attribute only on its next update.
  const active = (panels as HTMLElement & { activeid?: string }).activeid;
  if (active !== 'tab-tokens' && active !== 'tab-tools') return;
  const branchId = view.tablesScope === 'session' ? null : view.branchId;
  try {
    const t: TablesView = await request('tables/get', { branchId });
    replaceChildren(usageSlot, renderUsageTable(t));
    replaceChildren(toolSlot, renderToolTable(t));
  } catch (err) {
    showError(errorMessage(err));
  }
}

function saveState(): void {
  const s = view.snapshot;
  if (s) state.set({ dbPath: s.dbPath, sessionId: s.sessionId, branchId: view.branchId, turn: selectedTurn()?.turn });
}

onSnapshot((s) => {
  const previousTurn = view.snapshot ? selectedTurn()?.turn : undefined;
  const previousBranch = view.branchId;
  const previousCount = view.turns.length;
  view.snapshot = s;
  showError(s.problem ?? undefined);
  view.branchId = s.selectedBranchId;
  view.turns = s.firstPage.turns;
  view.nextAfterTurn = s.firstPage.nextAfterTurn;
  renderHeader();
  renderMap();
  drawTurns();
  if (!view.firstScreenReported && view.turns.length > 0) {
    view.firstScreenReported = true;
    // The first screen is drawn once the browser has laid the rows out.
    requestAnimationFrame(() => {
      const ms = performance.now() - started;
      // Read by the view benchmark (scripts/benchView.ts).
      app.setAttribute('data-first-screen-ms', ms.toFixed(1));
    });
  }
  void (async () => {
    let wanted = s.revealTurn ?? (view.branchId === previousBranch ? previousTurn : undefined);
    if (selectLastTurn) {
      selectLastTurn = false;
      while (view.nextAfterTurn !== null) await loadMore();
      wanted = view.turns[view.turns.length - 1]?.turn;
    }
    // After a live update keep as many turns loaded as before, so the list does not jump.
    while (view.turns.length < previousCount && view.nextAfterTurn !== null) await loadMore();
    const index = wanted !== undefined ? await loadUntil(wanted) : 0;
    if (view.turns.length > 0) {
      turnList.select(Math.max(0, index), s.revealTurn !== null || previousTurn === undefined);
      await selectTurn(Math.max(0, index));
    } else renderDetail();
    void loadTables();
  })();
});

post({ kind: 'ready' });

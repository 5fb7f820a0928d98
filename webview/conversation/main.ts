/**
 * The conversation view: branch map, the selected branch's turns (virtualized), the selected turn's items, and
 * token and tool tables. Its state and loading live in one `ConversationModel` (webview/logic/conversationModel.ts);
 * this file lays the page out, wires the controls to the model and redraws the part the model says changed.
 */
import { drawBranchMap } from './components/branchMap';
import { moreMenu } from './components/moreMenu';
import { t } from '../shared/l10n';
import { Composer } from './components/composer';
import type { AgentChoicesView } from '../../src/shared/agentChoices';
import type { WhatIfCallbacks } from './components/whatIfForm';
import { errorMessage } from '../../src/shared/errorMessage';
import { renderToolTable, renderUsageTable } from './components/tables';
import { renderTokenChart } from './components/tokenChart';
import { renderPricingHeader } from './components/pricingHeader';
import { hasOpenForm, redrawReviewBar, reloadTimeline, renderTurnDetail } from './components/turnDetail';
import { reloadContext } from './components/context';
import type { TurnReviewChangeView } from '../../src/shared/protocol/reviewViews';
import { DEFAULT_TAGS } from '../../src/shared/reviewVocabulary';
import { FORM_CLOSED_EVENT, detailKey, detailRedraw } from './logic/detailRedraw';
import { DetailState } from './logic/detailState';
import { captureDetailView, restoreDetailView } from './components/detailKeep';
import { TurnList } from './components/turnList';
import { SearchBar } from './components/searchBar';
import { el, replaceChildren } from '../shared/dom';
import { keepDrafts } from '../shared/drafts';
import { branchAtFork } from './logic/branchLayout';
import { ConversationModel, type ViewPart } from './logic/conversationModel';
import { listen, post, request, state } from '../shared/messenger';
import { registerToolkit } from '../shared/toolkit';
import type { ToolUsageView, TurnView, UsageSortKey } from '../../src/shared/protocol/conversationViews';
import { SortMemory } from './logic/sortRows';
import { radioKeyTarget, radioStates } from './logic/radioGroup';
import { turnCountLabel } from '../../src/shared/forkLabel';
import { oneLine } from '../../src/shared/itemText';
import { fillReplayBadges, revealCall } from './components/replayBadges';
import type { RecordedCallRef } from './logic/replayViews';
import { HistoryLayers } from './components/historyLayers';

// Time origin of the first-screen measurement: this script starts as the panel becomes ready.
const started = performance.now();
let firstScreenReported = false;
registerToolkit();

// ---- layout --------------------------------------------------------------------------------------------------
const app = document.getElementById('app') as HTMLElement;
const title = el('h1', { class: 'title' });
const badges = el('span', { class: 'badges' });
const actions = el('div', { class: 'actions' });
const banner = el('div', { class: 'banner', role: 'alert' });
const mapSlot = el('div', { class: 'map-slot' });
const detail = el('section', { class: 'turn-detail', 'aria-label': t('Selected turn'), tabindex: -1 });
const usageSlot = el('div', { class: 'usage-slot' });
const toolSlot = el('div', { class: 'tool-slot' });
const pricingSlot = el('div', { class: 'pricing-slot' });
const chartSlot = el('div', { class: 'chart-slot' });
const scopeButtons = el('div', { class: 'scope', role: 'radiogroup', 'aria-label': t('Token table scope') });
// The Tools tab has its own scope: it used to show whatever scope the Tokens tab last had, without saying so.
const toolScopeButtons = el('div', { class: 'scope tool-scope', role: 'radiogroup', 'aria-label': t('Tool table scope') });
const toolScopeLabel = el('p', { class: 'scope-label', 'aria-live': 'polite' });

const model = new ConversationModel(request, redraw, () => turnList.lastShownIndex);
const turnAt = (index: number): number | undefined => model.turns[index]?.turn;
const turnList = new TurnList({
  onSelect: (i) => {
    // A turn of the branch chosen while a layer is open: the branch again.
    layers.close();
    const turn = turnAt(i);
    if (turn !== undefined) void model.selectTurn(turn);
  },
  onOpen: (i) => {
    const turn = turnAt(i);
    if (turn !== undefined) void model.selectTurn(turn).then(() => detail.focus());
  },
  onFork: (direction) => fork(direction),
  onNeedMore: () => void model.loadMore(),
  onNeedEarlier: () => void model.loadEarlier(),
  onEnd: () => void model.loadToEnd(),
  onHome: () => void model.loadToStart(),
  // G and B in the list: the selected turn's verdict, pressed again to take it back.
  onVerdict: (i, verdict) => {
    const turn = model.turns[i];
    if (turn && turn.turn > 0) void model.review(turn, { verdict: model.reviewOf(turn)?.verdict === verdict ? null : verdict });
  },
});

/** The Tools table's order as the user chose it: its rows are sorted here, and a refresh builds the table again. */
const toolSort = new SortMemory<keyof ToolUsageView>();

const usageActions = {
  sort: (key: UsageSortKey) => void model.sortUsage(key),
  page: (step: 1 | -1) => void model.usagePage(step),
};

/** The agents a run can use, as last received from the host (the composer's and the forms' pickers). */
let agentChoices: AgentChoicesView | undefined;
function showAgents(view: AgentChoicesView): void {
  agentChoices = view;
  composer.agents.update(view);
}
function selectAgent(id: string): void {
  void request('agents/select', { id }).then(showAgents, () => undefined);
}

const composer = new Composer({
  send: (input, agent) => model.startRun(input, agent),
  selectAgent,
  stop: () => model.stopRuns(),
  setApiKey: async () => void (await request('apiKey/set', {})),
});
const whatIf: WhatIfCallbacks = {
  models: () => request('whatIf/models', {}),
  agents: () => agentChoices,
  selectedAgent: () => composer.agents.value,
  selectAgent,
  note: (started, text) => {
    for (const run of started.runs) composer.note(run.runId, text);
  },
  // The turn's calls as recorded where it ran (a shared turn's branch), what the form previews.
  replayTable: (turn) => request('replay/table', { branchId: turn.sharedFrom ?? model.branchId, turn: turn.turn }),
  start: async (turn, editedText, models, agent, tools) => {
    try {
      const params = {
        branchId: model.branchId,
        turn: turn.turn,
        branchTurnNumber: turn.branchTurnNumber as number,
        editedText,
        models,
        ...(agent !== undefined ? { agent } : {}),
        ...(tools !== undefined ? { tools } : {}),
      };
      return await request('whatIf/start', params);
    } catch (err) {
      return errorMessage(err);
    }
  },
};

// The history guard's layers of the shown branch (components/historyLayers.ts): read-only, beside the branch map.
const layers = new HistoryLayers({
  layers: () => request('layers/get', {}),
  items: (layerId) => request('layer/items', { layerId }),
  compare: (layerId) => request('layer/compare', { layerId }),
  restore: (layerId) => request('layer/restore', { layerId }),
  showBranch: (branchId) => void model.showBranch(branchId),
  opened: (open) => {
    // A layer is read-only: the turn detail (its branch and what-if actions) and the composer give way to it.
    detail.hidden = open;
    composer.element.hidden = open;
    if (open) layers.pane.focus();
  },
  openLink: (url) => openLink(url),
});

const panels = el(
  'vscode-panels',
  { class: 'tabs', 'aria-label': t('Conversation view') },
  el('vscode-panel-tab', { id: 'tab-conversation' }, t('Conversation')),
  el('vscode-panel-tab', { id: 'tab-tokens' }, t('Tokens')),
  el('vscode-panel-tab', { id: 'tab-tools' }, t('Tools')),
  el(
    'vscode-panel-view',
    { id: 'view-conversation' },
    el(
      'div',
      { class: 'conversation' },
      el('div', { class: 'map-column' }, mapSlot, layers.strip),
      turnList.element,
      el('div', { class: 'detail-column' }, detail, layers.pane, composer.element),
    ),
  ),
  el('vscode-panel-view', { id: 'view-tokens' }, el('div', { class: 'tables' }, scopeButtons, pricingSlot, chartSlot, usageSlot)),
  el('vscode-panel-view', { id: 'view-tools' }, el('div', { class: 'tables' }, toolScopeButtons, toolScopeLabel, toolSlot)),
);
panels.addEventListener('change', () => {
  void model.setTables(activeTab() === 'tab-tokens');
  void model.setTools(activeTab() === 'tab-tools');
});
const searchBar = new SearchBar({
  search: (query, branchId) => request('search/session', { query, branchId }),
  // A hit on another branch shows that branch in the view (as the branch map does), not the session's current one.
  reveal: (hit) => model.reveal({ branchId: hit.branchId, turn: hit.turn }),
  branchId: () => model.branchId,
  branches: () => model.session?.branches ?? [],
  selectedTurn: () => model.selectedTurn?.turn ?? null,
});
replaceChildren(app, el('header', { class: 'header' }, title, badges, actions, searchBar.element), banner, panels);

/**
 * "This branch" / "Whole session" buttons in `group` (a radio group), marked with `attribute`: the chosen one is
 * checked and primary, and the group's one Tab stop; the arrow keys move the choice (logic/radioGroup.ts).
 */
function scopeControl(group: HTMLElement, attribute: string, choose: (scope: 'branch' | 'session') => void): void {
  const scopes = ['branch', 'session'] as const;
  const buttons = scopes.map((scope) =>
    el('vscode-button', { [attribute]: scope, role: 'radio' }, scope === 'branch' ? t('This branch') : t('Whole session')),
  );
  const mark = (chosen: number): void =>
    radioStates(buttons.length, chosen).forEach((state, i) => {
      const b = buttons[i]!;
      b.setAttribute('appearance', state.appearance);
      b.setAttribute('aria-checked', String(state.checked));
      b.setAttribute('tabindex', String(state.tabIndex));
    });
  const pick = (i: number): void => {
    if (buttons[i]?.getAttribute('aria-checked') === 'true') return;
    mark(i);
    choose(scopes[i]!);
  };
  buttons.forEach((b, i) => {
    b.addEventListener('click', () => pick(i));
    b.addEventListener('keydown', (ev) => {
      const to = radioKeyTarget(ev.key, i, buttons.length);
      if (to === undefined) return;
      ev.preventDefault();
      pick(to);
      buttons[to]!.focus();
    });
  });
  mark(0);
  group.append(...buttons);
}
scopeControl(scopeButtons, 'data-scope', (scope) => void model.setTables(activeTab() === 'tab-tokens', scope));
scopeControl(toolScopeButtons, 'data-tool-scope', (scope) => void model.setTools(activeTab() === 'tab-tools', scope));

// ---- drawing -------------------------------------------------------------------------------------------------
/** Every redraw keeps what is typed in the page's inputs: text, selection and focus (shared/drafts.ts). */
function redraw(part: ViewPart): void {
  keepDrafts(app, () => drawPart(part));
}

function drawPart(part: ViewPart): void {
  switch (part) {
    case 'session':
      return renderHeader();
    case 'turns':
      return drawTurns();
    case 'selection':
      turnList.select(model.selectedIndex, model.scrollToSelection);
      renderDetail();
      return saveState();
    case 'items':
      return renderDetail();
    case 'tables':
      if (model.tables) {
        // Redrawn from scratch: a control that had the focus (a pager button, a header) gets it back.
        const active = document.activeElement;
        const focused = active?.closest('[data-focus]')?.getAttribute('data-focus');
        const slot = [usageSlot, pricingSlot].find((s) => active && s.contains(active));
        replaceChildren(usageSlot, renderUsageTable(model.tables, usageActions));
        replaceChildren(
          pricingSlot,
          renderPricingHeader(model.tables, () => void model.choosePricingModel()),
        );
        replaceChildren(chartSlot, renderTokenChart(model.tables));
        if (focused && slot) slot.querySelector<HTMLElement>(`[data-focus="${focused}"]:not([disabled])`)?.focus();
      }
      return;
    case 'tools':
      if (model.toolsProgress) {
        // A first count over a big session: say how far it got instead of leaving another scope's table up.
        const p = model.toolsProgress;
        toolScopeLabel.textContent =
          p.branchId === null ? t('Tools called in the whole session (all branches)') : t('Tools called on branch {0}', p.branchId);
        replaceChildren(
          toolSlot,
          el(
            'p',
            { class: 'note tool-progress', role: 'status' },
            t('Counting tool calls for the first time… {0} so far', p.done.toLocaleString()),
          ),
        );
        return;
      }
      if (model.tools) {
        const b = model.tools.branchId;
        toolScopeLabel.textContent =
          b === null ? t('Tools called in the whole session (all branches)') : t('Tools called on branch {0}', b);
        // Built again from new rows, in the order the user chose (kept here); a header that had the focus gets it back.
        const active = document.activeElement;
        const focused = active && toolSlot.contains(active) ? active.closest('[data-focus]')?.getAttribute('data-focus') : undefined;
        replaceChildren(toolSlot, renderToolTable(model.tools, toolSort));
        if (focused) toolSlot.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
      }
      return;
    case 'latency':
      return turnList.setLatency(model.latency, (turn) => model.latencyOf(turn), model.latencyError);
    case 'reviews':
      turnList.setReviews((turn) => model.reviewOf(turn));
      return redrawReviewBar(detail, model.selectedTurn, reviewCallbacks);
    case 'replay':
      // The marks arrive apart from the items: the cards' badge slots are filled in place.
      return fillReplayBadges(detail, model.replay?.badges, showRecordedCall);
    case 'timeline':
      // The trace store changed: an open Timeline (and Context) reads its turn again (a closed one reads when opened).
      reloadContext(detail);
      return reloadTimeline(detail);
    case 'banner': {
      const message = model.session?.problem ?? model.error;
      banner.textContent = message ?? '';
      banner.classList.toggle('visible', !!message);
      return;
    }
  }
}

function activeTab(): string | undefined {
  // The property, not the attribute: FAST reflects it to the attribute only on its next update.
  return (panels as HTMLElement & { activeid?: string }).activeid;
}

function openLink(url: string): void {
  post({ kind: 'link/open', url });
}

/** The turn the detail pane shows, and whether a redraw of it waits for an open form to close (logic/detailRedraw.ts). */
let detailShown: string | null = null;
/** The recorded call a badge's link asked for, until its turn is drawn. */
let pendingCall: RecordedCallRef | undefined;
let detailHeld = false;
/** Which long outputs are expanded and which items show raw JSON in the turn shown (logic/detailState.ts). */
const detailState = new DetailState();
detail.addEventListener(FORM_CLOSED_EVENT, () => {
  if (detailHeld) keepDrafts(app, renderDetail);
});

function renderDetail(): void {
  const s = model.session;
  const key = detailKey(model.branchId, model.selectedTurn?.turn ?? null);
  detailHeld = detailRedraw(detailShown, key, hasOpenForm(detail)) === 'hold';
  if (detailHeld) return;
  detailShown = key;
  // The same turn drawn again (a live refresh): its toggles, scroll position and focused control stay as they were.
  const kept = detailState.draw(key) ? captureDetailView(detail) : undefined;
  const branching = { branchId: model.branchId, allowed: !!s && !s.readonly, usedIds: new Set(s?.usedBranchIds ?? []) };
  renderTurnDetail(
    detail,
    model.selectedTurn,
    model.items,
    branching,
    {
      openLink,
      // The new branch is shown by the model once it exists.
      branchHere: (turn, name) => model.createBranch(turn, name),
      whatIf,
      copy: async (turn, sequenceNumber, part) =>
        (await request('content/copy', { ref: { branchId: model.branchId, turn, sequenceNumber }, part })).copied,
      openJson: (turn, sequenceNumber) => openJson(turn, sequenceNumber),
      // A shared turn's spans are linked to the branch that ran it.
      timeline: (turn) => request('turn/timeline', { branchId: turn.sharedFrom ?? model.branchId, turn: turn.turn }),
      context: (turn) => request('turn/context', { branchId: model.branchId, turn: turn.turn }),
      linkTrace: async (turn) => (await request('trace/link', { branchId: turn.sharedFrom ?? model.branchId, turn: turn.turn })).linked,
      ...reviewCallbacks,
    },
    detailState,
  );
  fillReplayBadges(detail, model.replay?.badges, showRecordedCall);
  // A badge's link led here: the recorded call's card, once its turn is drawn.
  const items = model.items;
  if (pendingCall && Array.isArray(items) && model.selectedTurn?.turn === pendingCall.turn && model.branchId === pendingCall.branchId) {
    revealCall(detail, pendingCall.callId);
    pendingCall = undefined;
  } else if (kept) restoreDetailView(detail, kept);
  searchBar.itemsDrawn(model.selectedTurn?.turn ?? null);
}

/** A *replayed* badge's link: the branch and turn the recorded call is on, as the branch map shows a branch. */
function showRecordedCall(ref: RecordedCallRef): void {
  pendingCall = ref;
  void model.reveal({ branchId: ref.branchId, turn: ref.turn });
}

/** The review bar's data and its changes (components/reviewBar.ts), shared by the detail and its redraws. */
const reviewCallbacks = {
  reviewState: (turn: TurnView) => ({
    review: model.reviewOf(turn),
    tags: model.reviews?.tags ?? DEFAULT_TAGS,
    problem: model.reviewsError,
  }),
  review: (turn: TurnView, change: TurnReviewChangeView) => void model.review(turn, change),
  correctionOf: (turn: TurnView, itemIndex: number) => model.correctionOf(turn, itemIndex),
  continueFromCorrection: (turn: TurnView, itemIndex: number) => model.continueFromCorrection(turn, itemIndex),
  askCopilot: (turn: TurnView) => model.askCopilot(turn),
  correct: (turn: TurnView, itemIndex: number, text: string | null) => model.correct(turn, itemIndex, text),
};

/** *Open as JSON* of an item, a turn (`sequenceNumber` null) or the shown branch (both null); a failure shows in the banner. */
function openJson(turn: number | null, sequenceNumber: number | null): void {
  request('content/openJson', { ref: { branchId: model.branchId, turn, sequenceNumber } }).catch((err: unknown) => {
    banner.textContent = errorMessage(err);
    banner.classList.add('visible');
  });
}

function drawTurns(): void {
  layers.setBranch(model.branchId);
  const b = model.session?.branches.find((x) => x.branchId === model.branchId);
  turnList.setFork(
    b && b.parentBranchId !== null && b.forkTurn !== null
      ? { branchId: b.branchId, parentBranchId: b.parentBranchId, forkTurn: b.forkTurn }
      : null,
  );
  turnList.set(
    model.turns,
    model.hasMore,
    model.hasEarlier,
    b ? t('Turns of branch {0} ({1})', model.branchId, turnCountLabel(b)) : t('Turns of branch {0}', model.branchId),
  );
  turnList.setHeading(model.branchId, b ? turnCountLabel(b) : '');
  if (!firstScreenReported && model.turns.length > 0) {
    firstScreenReported = true;
    // The first screen is drawn once the browser has laid the rows out.
    requestAnimationFrame(() => {
      const ms = performance.now() - started;
      // Read by the view benchmark (scripts/benchView.ts).
      app.setAttribute('data-first-screen-ms', ms.toFixed(1));
    });
  }
}

function fork(direction: 'left' | 'right'): void {
  const s = model.session;
  const turn = model.selectedTurn;
  if (!s || !turn) return;
  const target = branchAtFork(s.branches, model.branchId, turn.turn, direction);
  if (target) void model.showBranch(target, turn.turn);
}

function renderHeader(): void {
  const s = model.session;
  if (!s) return;
  const branchId = model.branchId;
  title.textContent = `${s.sessionId} · ${s.dbName}`;
  title.setAttribute('title', title.textContent);
  replaceChildren(
    badges,
    s.readonly ? el('span', { class: 'status-badge', title: t('Opened read-only: nothing is written') }, t('read-only')) : null,
  );
  const b = s.branches.find((x) => x.branchId === branchId);
  const switchButton = el(
    'vscode-button',
    { appearance: 'secondary', class: 'switch-branch', disabled: !b || b.isCurrent },
    b?.isCurrent ? t('{0} is current', oneLine(branchId, 24)) : t('Switch to {0}', oneLine(branchId, 24)),
  );
  switchButton.addEventListener('click', () => void model.switchBranch());
  // A long branch name is cut on the button (it would fill the header) and given whole in the tooltip.
  switchButton.setAttribute('title', b?.isCurrent ? t('{0} is current', branchId) : t('Switch to {0}', branchId));
  const openButton = el('vscode-button', { appearance: 'secondary', class: 'open-branch-json', disabled: !b }, t('Open as JSON'));
  openButton.addEventListener('click', () => openJson(null, null));
  // Destructive actions sit in a menu, away from Switch.
  const menu = moreMenu([
    {
      label: t('Export branch {0}…', oneLine(branchId, 24)),
      className: 'export-branch',
      disabled: !b,
      run: () => void request('branch/export', { branchId }).catch(() => undefined),
    },
    {
      label: t('Export session…'),
      className: 'export-session',
      disabled: false,
      run: () => void request('branch/export', { branchId: null }).catch(() => undefined),
    },
    {
      label: t('Delete branch {0}', branchId),
      className: 'delete-branch',
      disabled: s.readonly || branchId === 'main' || !b,
      run: () => void model.deleteBranch(),
    },
  ]);
  const compareButton = el(
    'vscode-button',
    { appearance: 'secondary', class: 'compare-branch', disabled: !b, title: t('Compare {0} with another branch', branchId) },
    t('Compare with…'),
  );
  compareButton.addEventListener('click', () => void request('branch/compare', { branchId }).catch(() => undefined));
  replaceChildren(actions, compareButton, switchButton, openButton, menu);
  composer.setEnabled(
    !s.readonly && !s.problem && !!b,
    branchId,
    s.readonly ? t('Read-only: open it writable to continue the conversation.') : undefined,
  );
  drawBranchMap(mapSlot, s.branches, branchId, (id) => void model.showBranch(id));
  layers.setBranch(branchId);
}

function saveState(): void {
  const s = model.session;
  if (s) state.set({ dbPath: s.dbPath, sessionId: s.sessionId, branchId: model.branchId, turn: model.selectedTurn?.turn });
}

listen({
  notice: (n) => {
    void model.noticeReceived(n);
    // A look recorded a layer, or the database was reopened: the layers are read again (nothing else changes them).
    if (n.what.includes('layers') || n.what.includes('database')) void layers.reload();
  },
  reveal: (r) => void model.reveal(r),
  run: (e) => {
    composer.show(e);
    // Which branch to show and when to read the turns again is the model's (logic/runTracker.ts).
    void model.runEvent(e);
  },
  agents: showAgents,
});
void model.start(state.selection());
void layers.reload();
void request('agents/get', {}).then(showAgents, () => undefined);

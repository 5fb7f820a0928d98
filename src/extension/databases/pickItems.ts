/**
 * The items of the palette's quick picks: a file, a session, a branch, a turn. Their words come from the files (ids,
 * branch names, message previews, file names), and VS Code draws `$(name)` in an item's label, description and detail
 * as an icon: each goes through `plainIconText`. Without VS Code, so it is unit-tested; localized with @vscode/l10n (the
 * host loads its bundle).
 */
import { basename } from 'node:path';
import * as l10n from '@vscode/l10n';
import { plainIconText } from '../core/iconText';
import { forkLabel, turnCountLabel } from '../../shared/forkLabel';
import { visibleText } from '../../shared/unicodeText';
import type { BranchNode, SessionSummary, TurnEntry } from '../../store/inspector/inspectorTypes';

export interface PickText {
  label: string;
  description: string;
}

/** A file: its name, and its path beside it. */
export function fileItem(path: string): PickText {
  return { label: plainIconText(basename(path)), description: plainIconText(path) };
}

/** A session of a file: its id, and how many items it has. */
export function sessionItem(s: Pick<SessionSummary, 'sessionId' | 'messageCount'>): PickText {
  return {
    label: plainIconText(s.sessionId),
    description: s.messageCount === 1 ? l10n.t('1 item') : l10n.t('{0} items', s.messageCount),
  };
}

type BranchFacts = Pick<BranchNode, 'branchId' | 'parentBranchId' | 'forkTurn' | 'userTurns' | 'userTurnsAtLeast'>;

/** A branch to switch to: its name (invisible characters written out), whether it is current, its turns, its parent. */
export function switchBranchItem(b: BranchFacts, isCurrent: boolean): PickText {
  return {
    label: plainIconText(visibleText(b.branchId)),
    description: plainIconText(
      [
        isCurrent ? l10n.t('current') : '',
        turnCountLabel(b),
        b.parentBranchId ? l10n.t('from {0} @ turn {1}', b.parentBranchId, b.forkTurn ?? '') : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ),
  };
}

/** A branch to compare with: its name (invisible characters written out), its turns and where it forked. */
export function compareBranchItem(b: BranchFacts): PickText {
  return {
    label: plainIconText(visibleText(b.branchId)),
    description: plainIconText([turnCountLabel(b), forkLabel(b)].filter(Boolean).join(' · ')),
  };
}

/** A user turn: its number, and the message's preview (or why there is none). */
export function turnItem(t: Pick<TurnEntry, 'turn' | 'preview' | 'error'>): PickText {
  return { label: l10n.t('Turn {0}', t.turn), description: plainIconText(t.preview ?? t.error ?? '') };
}

/** The two ways to import a file holding one branch (`branch`, not `main`): as the session's main branch, or by name. */
export function importBranchItems(branch: string): { label: string; detail: string; asMain: boolean }[] {
  const name = visibleText(branch);
  return [
    {
      label: plainIconText(l10n.t("Import '{0}' as main", name)),
      detail: l10n.t('An agent that opens the session continues this conversation.'),
      asMain: true,
    },
    {
      label: plainIconText(l10n.t("Keep the name '{0}'", name)),
      detail: l10n.t('The session has no main branch: an agent that opens it starts on an empty one.'),
      asMain: false,
    },
  ];
}

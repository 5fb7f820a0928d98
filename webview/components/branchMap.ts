import type { BranchView } from '../../src/shared/viewModels';
import { el } from '../dom';
import { branchLanes } from '../logic/branchLayout';
import { forkLabel, turnCountLabel } from '../../src/shared/forkLabel';

/**
 * The branch map: every branch as a lane under the branch it forked from, labelled with the fork turn. A lane is a
 * button: selecting it shows that branch's turns.
 */
export function renderBranchMap(branches: BranchView[], selected: string, onSelect: (branchId: string) => void): HTMLElement {
  const nav = el('nav', { class: 'branch-map', 'aria-label': 'Branches' });
  const list = el('ul', { role: 'tree', 'aria-label': 'Branches and where they forked' });
  for (const lane of branchLanes(branches)) {
    const b = lane.branch;
    const fork = forkLabel(b);
    const button = el(
      'button',
      {
        class: `lane depth-${Math.min(lane.depth, 8)}${b.branchId === selected ? ' selected' : ''}${b.isCurrent ? ' current' : ''}`,
        'data-branch': b.branchId,
        'aria-label': `Branch ${b.branchId}${b.isCurrent ? ', current' : ''}, ${turnCountLabel(b)}${fork ? `, ${fork}` : ''}`,
        'aria-pressed': b.branchId === selected ? 'true' : 'false',
      },
      el('span', { class: 'lane-name' }, b.branchId),
      b.isCurrent ? el('span', { class: 'lane-current', title: 'Current branch' }, '●') : null,
      el('span', { class: 'lane-meta' }, `${turnCountLabel(b)}${fork ? ` · ${fork}` : ''}`),
    );
    button.addEventListener('click', () => onSelect(b.branchId));
    list.appendChild(
      el('li', { role: 'treeitem', 'aria-level': lane.depth + 1, 'aria-selected': b.branchId === selected ? 'true' : 'false' }, button),
    );
  }
  nav.appendChild(list);
  return nav;
}

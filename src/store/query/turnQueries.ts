/**
 * Turns as readable text: the user's message, the assistant's messages, tool calls with their arguments and outputs,
 * in the Markdown of *Copy Turn as Markdown* and `agent-sessions show --turn` (src/store/export/markdown.ts, the one
 * owner of how items read as text). One turn, or a run of turns, cut to the answer's size with the call that
 * continues it.
 */
import { turnToMarkdown } from '../export/markdown';
import { answer, sourceOf, type QueryAnswer } from './queryAnswer';
import { dataValue } from './dataBlock';
import { intArgument, optionalString, pickBranch, requireSession, stringArgument } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_TURNS, MAX_MAX_CHARS, MAX_MAX_TURNS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted, countNoun } from '../../shared/countNoun';

export interface ReadTurnsArgs {
  session: string;
  /** Default `main` (else the session's first branch). */
  branch?: string;
  /** One turn (0 = the items before the first user message); excludes `afterTurn`. */
  turn?: number;
  /** Turns after this one (default 0: from the first). */
  afterTurn?: number;
  maxTurns?: number;
  maxChars?: number;
  /** With `turn`: skip this many characters of the turn's text (the `next` of a cut turn). */
  charOffset?: number;
}

export async function readTurns(store: QueryStore, args: ReadTurnsArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const sessionId = stringArgument('session', args.session);
  const branchArg = optionalString('branch', args.branch);
  const maxChars = intArgument('maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS });
  const maxTurns = intArgument('maxTurns', args.maxTurns, { min: 1, max: MAX_MAX_TURNS, fallback: DEFAULT_MAX_TURNS });
  const big = Number.MAX_SAFE_INTEGER;
  if (args.turn !== undefined && args.turn !== null && args.afterTurn !== undefined && args.afterTurn !== null)
    throw new QueryError('bad-argument', 'Pass turn (one turn) or afterTurn (turns after it), not both.', { drop: ['afterTurn'] });
  checkCancelled(signal);
  const tree = await requireSession(store, sessionId);
  const branch = pickBranch(store, sessionId, tree, branchArg);
  const branchId = branch.branchId;
  const source = sourceOf(store, sessionId, branchId);
  const turnsText = `${branch.userTurns}${branch.userTurnsAtLeast ? '+' : ''}`;
  const turnsNoun = countNoun(branch.userTurnsAtLeast ? 2 : branch.userTurns, 'turn');

  if (args.turn !== undefined && args.turn !== null) {
    const turn = intArgument('turn', args.turn, { min: 0, max: big, fallback: 1 });
    const charOffset = intArgument('charOffset', args.charOffset, { min: 0, max: big, fallback: 0 });
    const items = await store.reader.getTurnItems(sessionId, branchId, turn);
    checkCancelled(signal);
    if (items.length === 0) {
      throw new QueryError(
        'unknown-turn',
        `${
          turn === 0
            ? `Branch ${dataValue(branchId)} has no items before its first user message (turn 0).`
            : `Branch ${dataValue(branchId)} of session ${dataValue(sessionId)} has no turn ${turn}.`
        } ${branch.userTurns > 0 ? `Its turns are 1–${turnsText}.` : 'It has no turns yet.'}`,
        // The nearest turn there is, when there is one.
        branch.userTurns > 0
          ? { set: { turn: Math.max(1, Math.min(turn, branch.userTurns)) }, drop: ['charOffset'] }
          : { drop: ['turn', 'charOffset'] },
      );
    }
    const text = turnToMarkdown(turn, items, { headingLevel: 2, suffix: `(branch ${branchId})` });
    if (charOffset >= text.length && charOffset > 0)
      throw new QueryError(
        'bad-argument',
        `charOffset ${charOffset} is past the end of turn ${turn} (${counted(text.length, 'character')}).`,
        {
          drop: ['charOffset'],
        },
      );
    // The line that says where a continued turn starts counts in the body's maxChars, as the turn's text does.
    const from = charOffset > 0 ? `(turn ${turn} from character ${charOffset})\n` : '';
    const rest = text.slice(charOffset);
    const shown = rest.slice(0, Math.max(1, maxChars - from.length));
    const left = rest.length - shown.length;
    const next = left > 0 ? { turn, charOffset: charOffset + shown.length } : null;
    return answer(
      { ...source, turns: { from: turn, to: turn } },
      `${from}${shown}`,
      next,
      left > 0
        ? `… truncated: ${counted(left, 'more character')} of turn ${turn} — call read_turns again with turn=${turn}, charOffset=${charOffset + shown.length}.`
        : undefined,
    );
  }

  const afterTurn = intArgument('afterTurn', args.afterTurn, { min: 0, max: big, fallback: 0 });
  const page = await store.reader.getTurnsPage(sessionId, branchId, { afterTurn: afterTurn > 0 ? afterTurn : null, limit: maxTurns });
  if (page.turns.length === 0) {
    if (branch.userTurns === 0) return answer(source, `Branch ${JSON.stringify(branchId)} has no user turns yet.`, null);
    throw new QueryError(
      'unknown-turn',
      `Branch ${dataValue(branchId)} has no turns after turn ${afterTurn}: it has ${turnsText} ${turnsNoun}.`,
      {
        set: { branch: branchId, afterTurn: Math.max(0, branch.userTurns - maxTurns) },
      },
    );
  }
  const first = page.turns[0]!.turn;
  const lastOfPage = page.turns[page.turns.length - 1]!.turn;
  // The heading counts in maxChars too: the turns get what it leaves, measured with the page's last turn (the most
  // digits the heading can have), so the body stays within maxChars.
  const heading = (to: number) => `Branch ${JSON.stringify(branchId)} has ${turnsText} ${turnsNoun}; turns ${first}–${to} follow.\n\n`;
  const budget = new TextBudget(Math.max(1, maxChars - heading(lastOfPage).length));
  let last: number | null = null;
  let cut: { turn: number; charOffset: number; left: number } | null = null;
  for (const entry of page.turns) {
    checkCancelled(signal);
    const items = await store.reader.getTurnItems(sessionId, branchId, entry.turn);
    const markdown = turnToMarkdown(entry.turn, items, { headingLevel: 2, suffix: `(branch ${branchId})` });
    if (!budget.add(`${markdown}\n`)) break;
    last = entry.turn;
    if (budget.cutChars > 0) {
      // Cut: what is left of the turn's own text (the newline after it is not the turn's), as read_turns turn=N
      // counts it from the same charOffset. A cut that took only that newline left nothing of the turn.
      const left = markdown.length - budget.maxChars;
      if (left > 0) cut = { turn: entry.turn, charOffset: budget.maxChars, left };
      break;
    }
  }
  const shownTo = last ?? first;
  // Turns left after what was shown: the branch's count when the store knows it, else at least the page's next one.
  const leftTurns = branch.userTurnsAtLeast ? null : Math.max(0, branch.userTurns - shownTo);
  const more = cut !== null || shownTo < lastOfPage || page.nextAfterTurn !== null || (leftTurns ?? 0) > 0;
  const lines: string[] = [];
  let next: Record<string, number> | null = null;
  if (cut) {
    next = { turn: cut.turn, charOffset: cut.charOffset };
    lines.push(
      `… truncated: ${counted(cut.left, 'more character')} of turn ${cut.turn} — call read_turns again with turn=${cut.turn}, charOffset=${cut.charOffset}.`,
    );
    if (leftTurns !== 0) lines.push(`Then the turns after it: afterTurn=${cut.turn}.`);
  } else if (more) {
    next = { afterTurn: shownTo };
    const count = leftTurns === null ? 'more turns' : `${counted(leftTurns, 'more turn')} (up to turn ${branch.userTurns})`;
    lines.push(`… truncated: ${count} — call read_turns again with afterTurn=${shownTo}.`);
  }
  return answer(
    { ...source, turns: { from: first, to: shownTo } },
    `${heading(shownTo)}${budget.text()}`,
    next,
    lines.join('\n') || undefined,
  );
}

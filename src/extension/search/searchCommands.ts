/** *Search Sessions…* and the Search Results view's commands. */
import * as vscode from 'vscode';
import { SearchQueryError, parseSearchQuery } from '../../store';
import { arg, argOrInput, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import type { HitNode } from './searchResults';

function isHitNode(v: unknown): v is HitNode {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'hit';
}

/** What is wrong with a query as it is typed (an input box's `validateInput`), or undefined; empty is not wrong yet. */
export function searchQueryProblem(value: string): string | undefined {
  if (value.trim() === '') return undefined;
  try {
    parseSearchQuery(value);
    return undefined;
  } catch (err) {
    return err instanceof SearchQueryError ? err.message : undefined;
  }
}

export function searchCommands(s: Services): CommandsOf<'searchSessions' | 'cancelSearch' | 'clearSearchResults' | 'openSearchHit'> {
  const { search } = s;
  return {
    // The second argument is the hit limit: the Search Results view's "more hits" row passes a higher one.
    searchSessions: command(vscode.l10n.t('Search Sessions'), [arg.text, arg.any], async (query, maxHits) => {
      const text = await argOrInput(query, {
        title: vscode.l10n.t('Search Sessions'),
        prompt: vscode.l10n.t('Text to find (any case), or filters: tool:NAME, is:failed, role:user, is:bad, tag:TAG, reviewed:no'),
        placeHolder: vscode.l10n.t('e.g. refund   tool:get_weather is:failed   role:user "exact phrase"'),
        value: search.query,
        validateInput: searchQueryProblem,
      });
      if (text === undefined || text.trim() === '') return undefined;
      if (maxHits !== undefined && typeof maxHits !== 'number')
        badArgument(vscode.l10n.t('Search Sessions'), vscode.l10n.t('a hit limit (a number)'));
      return search.search(text, maxHits);
    }),
    cancelSearch: command(vscode.l10n.t('Cancel Search'), [], () => search.cancel()),
    clearSearchResults: command(vscode.l10n.t('Clear Search Results'), [], () => search.clear()),
    openSearchHit: command(vscode.l10n.t('Open in Conversation View'), [arg.any], async (hit) => {
      if (!isHitNode(hit)) throw new UserFacingError(vscode.l10n.t('Open a result from the Search Results view.'));
      await search.open(hit);
    }),
  };
}

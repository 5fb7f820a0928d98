import { CommandId } from '../core/contributions';
import { reported } from '../core/commandTable';
import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { openAsJson } from './contentCommands';
import { copyContent } from './contentCopy';

/** The conversation view's requests for content: a copy to the clipboard, and *Open as JSON*. */
export function contentRequests(s: Services): RequestsOf<'content/copy' | 'content/openJson'> {
  const { registry, jsonDocuments } = s;
  return {
    'content/copy': async (p, view) => {
      await copyContent(registry, view.target, p.ref, p.part);
      return { copied: true };
    },
    // `opened` false when it could not (the failure is reported as the command's: the user was told why).
    'content/openJson': async (p, view) => ({
      opened: (await reported(CommandId.openAsJson, () => openAsJson(jsonDocuments, { ...view.target, ...p.ref }))) !== undefined,
    }),
  };
}

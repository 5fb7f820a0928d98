/**
 * The addresses of the doctor's documents: a checked session of a file, or the file's own findings (`sessionId`
 * null). The path is only the tab's title; the query holds the reference, so a title is never parsed back. The Sessions
 * view gives a session item this address too, which is how the session's badge finds it.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';

export const DOCTOR_SCHEME = 'agent-sessions-doctor';

export interface DoctorDocRef {
  dbPath: string;
  sessionId: string | null;
}

export function doctorUri(ref: DoctorDocRef): vscode.Uri {
  const title = (ref.sessionId ?? basename(ref.dbPath)).replace(/[/\\]/g, '∕');
  return vscode.Uri.from({ scheme: DOCTOR_SCHEME, path: `/${title} · doctor`, query: JSON.stringify([ref.dbPath, ref.sessionId]) });
}

/** The reference in a document's address; throws for an address this feature did not make. */
export function parseDoctorUri(uri: vscode.Uri): DoctorDocRef {
  let parsed: unknown;
  try {
    parsed = JSON.parse(uri.query);
  } catch {
    parsed = undefined;
  }
  if (
    uri.scheme !== DOCTOR_SCHEME ||
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    (parsed[1] !== null && typeof parsed[1] !== 'string')
  )
    throw new Error(`Not an Agent Sessions doctor document: ${uri.toString(true).slice(0, 200)}`);
  return { dbPath: parsed[0], sessionId: parsed[1] as string | null };
}

/**
 * Reading a JSON export back: the document is checked field by field before anything is written, and a wrong value
 * is reported with its JSON path (`$.structure[2].message_ref`), so a hand-edited file says where it broke.
 */
import { TransferError } from './exportErrors';
import {
  JSON_EXPORT_FORMAT,
  JSON_EXPORT_VERSION,
  type ExportedMessage,
  type ExportedSessionRow,
  type ExportedStructureRow,
  type ExportedUsageRow,
  type SessionExport,
} from './jsonExport';

type Json = Record<string, unknown>;

function bad(path: string, what: string): never {
  throw new TransferError('malformed', `Not a valid session export: ${path} ${what}.`, undefined, path);
}

function record(v: unknown, path: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(path, 'must be an object');
  return v as Json;
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) bad(path, 'must be an array');
  return v;
}

function text(o: Json, key: string, path: string, options: { nullable?: boolean; nonEmpty?: boolean } = {}): string | null {
  const v = o[key];
  if (v === null && options.nullable) return null;
  if (typeof v !== 'string') bad(`${path}.${key}`, options.nullable ? 'must be a string or null' : 'must be a string');
  if (options.nonEmpty && v === '') bad(`${path}.${key}`, 'must not be empty');
  return v;
}

function integer(o: Json, key: string, path: string, nullable = false): number | null {
  const v = o[key];
  if (v === null && nullable) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v))
    bad(`${path}.${key}`, nullable ? 'must be an integer or null' : 'must be an integer');
  return v;
}

/** Parses and checks a JSON export; throws `TransferError('malformed')` naming the path of the first wrong value. */
export function parseJsonExport(source: string): SessionExport {
  let doc: unknown;
  try {
    doc = JSON.parse(source);
  } catch (err) {
    throw new TransferError('malformed', `Not valid JSON: ${err instanceof Error ? err.message : String(err)}.`, undefined, '$');
  }
  const root = record(doc, '$');
  if (root.format !== JSON_EXPORT_FORMAT) bad('$.format', `must be "${JSON_EXPORT_FORMAT}" (this is not a session export)`);
  if (root.version !== JSON_EXPORT_VERSION) bad('$.version', `must be ${JSON_EXPORT_VERSION} (a newer version cannot be read)`);
  if (root.scope !== 'session' && root.scope !== 'branch') bad('$.scope', 'must be "session" or "branch"');
  const branch = text(root, 'branch', '$', { nullable: true });
  if (typeof root.structured !== 'boolean') bad('$.structured', 'must be true or false');
  let session: ExportedSessionRow | null = null;
  if (root.session !== null) {
    const s = record(root.session, '$.session');
    session = {
      session_id: text(s, 'session_id', '$.session', { nonEmpty: true }) as string,
      created_at: text(s, 'created_at', '$.session', { nullable: true }),
      updated_at: text(s, 'updated_at', '$.session', { nullable: true }),
    };
  }
  const messages: ExportedMessage[] = array(root.messages, '$.messages').map((v, i) => {
    const p = `$.messages[${i}]`;
    const m = record(v, p);
    if (m.ref !== i) bad(`${p}.ref`, `must be ${i} (messages are numbered in order)`);
    return { ref: i, created_at: text(m, 'created_at', p, { nullable: true }), message_data: text(m, 'message_data', p) as string };
  });
  const sequences = new Set<number>();
  const structure: ExportedStructureRow[] = array(root.structure, '$.structure').map((v, i) => {
    const p = `$.structure[${i}]`;
    const r = record(v, p);
    const ref = integer(r, 'message_ref', p) as number;
    if (ref < 0 || ref >= messages.length) bad(`${p}.message_ref`, `must name one of the ${messages.length} messages`);
    const sequence = integer(r, 'sequence_number', p) as number;
    if (sequences.has(sequence)) bad(`${p}.sequence_number`, `repeats ${sequence}`);
    sequences.add(sequence);
    return {
      branch_id: text(r, 'branch_id', p, { nonEmpty: true }) as string,
      sequence_number: sequence,
      message_ref: ref,
      message_type: text(r, 'message_type', p) as string,
      user_turn_number: integer(r, 'user_turn_number', p, true),
      branch_turn_number: integer(r, 'branch_turn_number', p, true),
      tool_name: text(r, 'tool_name', p, { nullable: true }),
      created_at: text(r, 'created_at', p, { nullable: true }),
    };
  });
  if (!root.structured && structure.length > 0) bad('$.structure', 'must be empty when "structured" is false');
  const usageKeys = new Set<string>();
  const usage: ExportedUsageRow[] = array(root.usage, '$.usage').map((v, i) => {
    const p = `$.usage[${i}]`;
    const u = record(v, p);
    const row: ExportedUsageRow = {
      branch_id: text(u, 'branch_id', p, { nonEmpty: true }) as string,
      user_turn_number: integer(u, 'user_turn_number', p) as number,
      requests: integer(u, 'requests', p, true),
      input_tokens: integer(u, 'input_tokens', p, true),
      output_tokens: integer(u, 'output_tokens', p, true),
      total_tokens: integer(u, 'total_tokens', p, true),
      input_tokens_details: text(u, 'input_tokens_details', p, { nullable: true }),
      output_tokens_details: text(u, 'output_tokens_details', p, { nullable: true }),
      created_at: text(u, 'created_at', p, { nullable: true }),
    };
    const key = `${row.branch_id}\u0000${row.user_turn_number}`;
    if (usageKeys.has(key)) bad(p, `repeats the usage of turn ${row.user_turn_number} on branch '${row.branch_id}'`);
    usageKeys.add(key);
    return row;
  });
  return {
    format: JSON_EXPORT_FORMAT,
    version: JSON_EXPORT_VERSION,
    scope: root.scope,
    branch,
    structured: root.structured,
    session,
    messages,
    structure,
    usage,
  };
}

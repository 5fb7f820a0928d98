/**
 * Reading a JSON export back: the document is checked field by field before anything is written, and a wrong value
 * is reported with its JSON path (`$.structure[2].message_ref`), so a hand-edited file says where it broke. The row
 * checks are shared with the streaming reader (`jsonStream.ts`), which reads the layout the export writes a line at a
 * time.
 */
import { TransferError } from './exportErrors';
import { formatCount, MAX_IMPORT_FIELD_CHARS, MAX_IMPORT_ITEM_CHARS, MAX_IMPORT_JSON_DEPTH, nestsDeeperThan } from './importLimits';
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

/** The document's fields other than its three row lists. */
export type SessionExportHeader = Omit<SessionExport, 'messages' | 'structure' | 'usage'>;

function bad(path: string, what: string, line?: number): never {
  const where = line === undefined ? '' : `Line ${line}: `;
  throw new TransferError('malformed', `${where}Not a valid session export: ${path} ${what}.`, line, path);
}

function record(v: unknown, path: string, line?: number): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(path, 'must be an object', line);
  return v as Json;
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) bad(path, 'must be an array');
  return v;
}

function text(
  o: Json,
  key: string,
  path: string,
  options: { nullable?: boolean; nonEmpty?: boolean; branchId?: boolean; line?: number } = {},
): string | null {
  const v = o[key];
  if (v === null && options.nullable) return null;
  if (typeof v !== 'string') bad(`${path}.${key}`, options.nullable ? 'must be a string or null' : 'must be a string', options.line);
  if (options.nonEmpty && v === '') bad(`${path}.${key}`, 'must not be empty', options.line);
  // The doctor's blank-branch-id: delete_branch trims its argument, so such a branch could never be deleted.
  if (options.branchId && v.trim() === '')
    bad(
      `${path}.${key}`,
      'must not be blank (a branch id of only spaces can never be deleted: the doctor reports blank-branch-id)',
      options.line,
    );
  if (v.length > MAX_IMPORT_FIELD_CHARS)
    bad(
      `${path}.${key}`,
      `is longer than ${formatCount(MAX_IMPORT_FIELD_CHARS)} characters, the bound of an export's ids, names and times`,
      options.line,
    );
  return v;
}

/** A message's item: within the bounds of an imported item's size and nesting (`importLimits.ts`). */
function item(o: Json, key: string, path: string, line?: number): string {
  const v = o[key];
  if (typeof v !== 'string') bad(`${path}.${key}`, 'must be a string', line);
  if (v.length > MAX_IMPORT_ITEM_CHARS)
    bad(`${path}.${key}`, `is longer than ${formatCount(MAX_IMPORT_ITEM_CHARS)} characters (32 MiB), the bound of an imported item`, line);
  if (nestsDeeperThan(v, MAX_IMPORT_JSON_DEPTH))
    bad(`${path}.${key}`, `nests arrays and objects more than ${MAX_IMPORT_JSON_DEPTH} levels deep, the bound of an imported item`, line);
  return v;
}

function integer(o: Json, key: string, path: string, nullable = false, line?: number): number | null {
  const v = o[key];
  if (v === null && nullable) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v))
    bad(`${path}.${key}`, nullable ? 'must be an integer or null' : 'must be an integer', line);
  return v;
}

/** A count of a usage row (requests, tokens): no SDK stores a negative one, and totals would subtract it. */
function count(o: Json, key: string, path: string, line?: number): number | null {
  const v = integer(o, key, path, true, line);
  if (v !== null && v < 0) bad(`${path}.${key}`, `must not be negative (got ${v})`, line);
  return v;
}

/** Checks the document's own fields (`format`, `version`, `scope`, `branch`, `structured`, `session`). */
export function checkHeader(root: Json, line?: number): SessionExportHeader {
  if (root.format !== JSON_EXPORT_FORMAT) bad('$.format', `must be "${JSON_EXPORT_FORMAT}" (this is not a session export)`, line);
  if (root.version !== JSON_EXPORT_VERSION) bad('$.version', `must be ${JSON_EXPORT_VERSION} (a newer version cannot be read)`, line);
  if (root.scope !== 'session' && root.scope !== 'branch') bad('$.scope', 'must be "session" or "branch"', line);
  const branch = text(root, 'branch', '$', { nullable: true, line });
  if (typeof root.structured !== 'boolean') bad('$.structured', 'must be true or false', line);
  let session: ExportedSessionRow | null = null;
  if (root.session !== null) {
    const s = record(root.session, '$.session', line);
    session = {
      session_id: text(s, 'session_id', '$.session', { nonEmpty: true, line }) as string,
      created_at: text(s, 'created_at', '$.session', { nullable: true, line }),
      updated_at: text(s, 'updated_at', '$.session', { nullable: true, line }),
    };
  }
  const header: SessionExportHeader = {
    format: JSON_EXPORT_FORMAT,
    version: JSON_EXPORT_VERSION,
    scope: root.scope,
    branch,
    structured: root.structured,
    session,
  };
  if (root.reserved_branches !== undefined) header.reserved_branches = reservedBranches(root, line);
  return header;
}

/** At most this many reserved branch ids in an export's header: far more branches than one conversation makes. */
export const MAX_RESERVED_BRANCHES = 100_000;

/** `reserved_branches`: each a branch id as a structure row's (not blank, within the field bound), at most the bound. */
function reservedBranches(root: Json, line?: number): string[] {
  const list = root.reserved_branches;
  if (!Array.isArray(list)) bad('$.reserved_branches', 'must be an array of branch ids', line);
  if (list.length > MAX_RESERVED_BRANCHES)
    bad('$.reserved_branches', `holds more than ${formatCount(MAX_RESERVED_BRANCHES)} ids, the bound of an export's reservations`, line);
  if (list.length > 0 && root.structured !== true) bad('$.reserved_branches', 'must be empty for a session without structure rows', line);
  return list.map((id: unknown, i) => {
    const path = `$.reserved_branches[${i}]`;
    if (typeof id !== 'string' || id.trim() === '') bad(path, 'must be a branch id (a string that is not blank)', line);
    if (id.length > MAX_IMPORT_FIELD_CHARS)
      bad(path, `is longer than ${formatCount(MAX_IMPORT_FIELD_CHARS)} characters, the bound of an export's ids, names and times`, line);
    return id;
  });
}

/** Base64 of at most an item's bound of bytes. */
const MAX_BASE64_CHARS = Math.ceil(MAX_IMPORT_ITEM_CHARS / 3) * 4;

export function checkMessage(v: unknown, i: number, line?: number): ExportedMessage {
  const p = `$.messages[${i}]`;
  const m = record(v, p, line);
  if (m.ref !== i) bad(`${p}.ref`, `must be ${i} (messages are numbered in order)`, line);
  const message: ExportedMessage = {
    ref: i,
    created_at: text(m, 'created_at', p, { nullable: true, line }),
    message_data: item(m, 'message_data', p, line),
  };
  // A BLOB message_data (`jsonExport.ts`); absent from exports written before, and from every TEXT row.
  if (m.message_data_type !== undefined) {
    if (m.message_data_type !== 'blob') bad(`${p}.message_data_type`, 'must be "blob" when present', line);
    message.message_data_type = 'blob';
  }
  if (m.message_data_base64 !== undefined) {
    const b64 = m.message_data_base64;
    if (message.message_data_type !== 'blob') bad(`${p}.message_data_base64`, 'is only for a message_data_type of "blob"', line);
    if (typeof b64 !== 'string') bad(`${p}.message_data_base64`, 'must be a string', line);
    if (b64.length > MAX_BASE64_CHARS)
      bad(
        `${p}.message_data_base64`,
        `holds more than ${formatCount(MAX_IMPORT_ITEM_CHARS)} bytes (32 MiB), the bound of an imported item`,
        line,
      );
    // Decoded and encoded again: `Buffer.from` skips what is not base64 without a word.
    if (Buffer.from(b64, 'base64').toString('base64') !== b64) bad(`${p}.message_data_base64`, 'must be base64', line);
    message.message_data_base64 = b64;
  }
  return message;
}

/** `sequences` collects the sequence numbers seen (they must not repeat). */
export function checkStructureRow(
  v: unknown,
  i: number,
  messageCount: number,
  sequences: Set<number>,
  line?: number,
): ExportedStructureRow {
  const p = `$.structure[${i}]`;
  const r = record(v, p, line);
  const ref = integer(r, 'message_ref', p, false, line) as number;
  if (ref < 0 || ref >= messageCount) bad(`${p}.message_ref`, `must name one of the ${messageCount} messages`, line);
  const sequence = integer(r, 'sequence_number', p, false, line) as number;
  if (sequences.has(sequence)) bad(`${p}.sequence_number`, `repeats ${sequence}`, line);
  sequences.add(sequence);
  return {
    branch_id: text(r, 'branch_id', p, { nonEmpty: true, branchId: true, line }) as string,
    sequence_number: sequence,
    message_ref: ref,
    message_type: text(r, 'message_type', p, { line }) as string,
    user_turn_number: integer(r, 'user_turn_number', p, true, line),
    branch_turn_number: integer(r, 'branch_turn_number', p, true, line),
    tool_name: text(r, 'tool_name', p, { nullable: true, line }),
    created_at: text(r, 'created_at', p, { nullable: true, line }),
  };
}

/** `keys` collects the (branch, turn) pairs seen (a turn has one usage row). */
export function checkUsageRow(v: unknown, i: number, keys: Set<string>, line?: number): ExportedUsageRow {
  const p = `$.usage[${i}]`;
  const u = record(v, p, line);
  const row: ExportedUsageRow = {
    branch_id: text(u, 'branch_id', p, { nonEmpty: true, branchId: true, line }) as string,
    user_turn_number: integer(u, 'user_turn_number', p, false, line) as number,
    requests: count(u, 'requests', p, line),
    input_tokens: count(u, 'input_tokens', p, line),
    output_tokens: count(u, 'output_tokens', p, line),
    total_tokens: count(u, 'total_tokens', p, line),
    input_tokens_details: text(u, 'input_tokens_details', p, { nullable: true, line }),
    output_tokens_details: text(u, 'output_tokens_details', p, { nullable: true, line }),
    created_at: text(u, 'created_at', p, { nullable: true, line }),
  };
  const key = `${row.branch_id}\u0000${row.user_turn_number}`;
  if (keys.has(key)) bad(p, `repeats the usage of turn ${row.user_turn_number} on branch '${row.branch_id}'`, line);
  keys.add(key);
  return row;
}

/** What the refusals of damage add: where the remedy is. */
const REPAIR_FIRST = '; repair the session file it was exported from with `agent-sessions doctor --fix`, then export it again';

const turnKey = (branchId: string, turn: number): string => `${branchId}\u0000${turn}`;

/**
 * What the rows of one export must agree on, gathered as they are read (the whole document, or a line at a time): no
 * sequence number and no usage turn repeats, and nothing is written that the doctor would report (docs/doctor.md). A
 * usage row must name a branch and turn some structure row holds (else `turn-zero-usage` or `orphan-usage`), and in a
 * session with structure every message must be some structure row's (else `orphan-messages`). An export of a sound
 * file never holds these; one of a damaged file is repaired first (`agent-sessions doctor --fix`), then exported again.
 */
export class ExportRowChecks {
  private readonly sequences = new Set<number>();
  private readonly usageKeys = new Set<string>();
  /** Each (branch, user turn) a structure row holds. */
  private readonly turns = new Set<string>();
  /** One byte per message: 1 once a structure row references it. */
  private referenced: Uint8Array | undefined;

  structureRow(v: unknown, i: number, messageCount: number, line?: number): ExportedStructureRow {
    const row = checkStructureRow(v, i, messageCount, this.sequences, line);
    (this.referenced ??= new Uint8Array(messageCount))[row.message_ref] = 1;
    if (row.user_turn_number !== null) this.turns.add(turnKey(row.branch_id, row.user_turn_number));
    return row;
  }

  /** Once every structure row was read (before the usage rows): a structured export's messages all have one. */
  structureEnd(header: SessionExportHeader, messageCount: number): void {
    if (!header.structured) return;
    for (let i = 0; i < messageCount; i++) {
      if (this.referenced?.[i] !== 1)
        bad(
          `$.messages[${i}]`,
          `is referenced by no structure row, so no branch shows it (the doctor reports orphan-messages)${REPAIR_FIRST}`,
        );
    }
  }

  usageRow(v: unknown, i: number, line?: number): ExportedUsageRow {
    const row = checkUsageRow(v, i, this.usageKeys, line);
    if (!this.turns.has(turnKey(row.branch_id, row.user_turn_number))) {
      if (row.user_turn_number === 0)
        bad(
          `$.usage[${i}].user_turn_number`,
          `is 0, and branch '${row.branch_id}' has no turn 0: usage of a run no turn shows (the doctor reports turn-zero-usage, which this project never writes)${REPAIR_FIRST}`,
          line,
        );
      bad(
        `$.usage[${i}]`,
        `is the usage of turn ${row.user_turn_number} on branch '${row.branch_id}', which no structure row holds (the doctor reports orphan-usage)${REPAIR_FIRST}`,
        line,
      );
    }
    return row;
  }
}

/** Throws `malformed` when a plain session's export has structure rows. */
export function checkPlainHasNoStructure(header: SessionExportHeader, structureRows: number, line?: number): void {
  if (!header.structured && structureRows > 0) bad('$.structure', 'must be empty when "structured" is false', line);
}

/** Parses and checks a JSON export held in memory; throws `TransferError('malformed')` naming the first wrong value's path. */
export function parseJsonExport(source: string): SessionExport {
  let doc: unknown;
  // JSON.parse itself does not recurse, but a value nested this deep is no export of ours, and is refused unread.
  if (nestsDeeperThan(source, MAX_IMPORT_JSON_DEPTH))
    throw new TransferError(
      'malformed',
      `Not a valid session export: it nests arrays and objects more than ${MAX_IMPORT_JSON_DEPTH} levels deep, the bound of an import.`,
      undefined,
      '$',
    );
  try {
    doc = JSON.parse(source);
  } catch (err) {
    throw new TransferError('malformed', `Not valid JSON: ${err instanceof Error ? err.message : String(err)}.`, undefined, '$');
  }
  const root = record(doc, '$');
  const header = checkHeader(root);
  const messages = array(root.messages, '$.messages').map((v, i) => checkMessage(v, i));
  const checks = new ExportRowChecks();
  const structure = array(root.structure, '$.structure').map((v, i) => checks.structureRow(v, i, messages.length));
  checkPlainHasNoStructure(header, structure.length);
  checks.structureEnd(header, messages.length);
  const usage = array(root.usage, '$.usage').map((v, i) => checks.usageRow(v, i));
  return { ...header, messages, structure, usage };
}

/** Databases the export tests read: the demo, a session with every built-in tool type, the Python-written fixtures. */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../../../scripts/demo';
import { exportSession, type ExportFormat, type ExportRequest } from '../../../../src/store';
import { writeBuiltinToolSession } from '../../../support/builtinToolItems';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const PYTHON_FIXTURES = ['ref-basic', 'ref-multisession'].map((n) => join(ROOT, 'test', 'fixtures', 'conformance', `${n}.db`));

/** Copies a Python fixture (with its -wal/-shm) into `dir`; opening the original would touch it. */
export function copyPythonFixture(fixture: string, dir: string): string {
  const name = fixture.split(/[\\/]/).pop()!;
  const target = join(dir, name);
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(fixture + suffix)) copyFileSync(fixture + suffix, target + suffix);
  return target;
}

/** The demo database (two sessions, three branches, tool calls, usage) plus the built-in tools session `tools`. */
export async function writeExportFixture(path: string): Promise<void> {
  await writeDemoDatabase(path);
  await writeBuiltinToolSession(path, 'tools');
}

/** An export as one string. */
export async function exportText(dbPath: string, format: ExportFormat, request: ExportRequest): Promise<string> {
  let text = '';
  await exportSession(dbPath, format, request, (chunk) => {
    text += chunk;
  });
  return text;
}

/**
 * Finds the strings the code localizes, with the TypeScript compiler's parser (not a regex, so quotes, escapes and
 * template literals read as the compiler reads them): `vscode.l10n.t('…')` in src/extension, `l10n.t('…')` from
 * `@vscode/l10n` in src/shared and in the host modules that stay free of `vscode` (unit-tested in Node), and `t('…')`
 * from `webview/shared/l10n.ts` in the webview. The English text is the key of l10n/bundle.l10n.<lang>.json.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

export interface LocalizedString {
  message: string;
  file: string;
  line: number;
}

/** A call whose first argument is not a plain string literal: its key cannot be known, so it is an error. */
export interface UnreadableCall {
  file: string;
  line: number;
  text: string;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Whether `call` is one of the localization calls above; `webviewNames`: the local names of webview/shared/l10n.ts's `t`. */
function isLocalizeCall(call: ts.CallExpression, webviewNames: ReadonlySet<string>): boolean {
  const callee = call.expression;
  if (ts.isPropertyAccessExpression(callee) && callee.name.text === 't') {
    const target = callee.expression.getText();
    return target === 'vscode.l10n' || target === 'l10n';
  }
  return ts.isIdentifier(callee) && webviewNames.has(callee.text);
}

/** The names a webview module imports webview/shared/l10n.ts's `t` under (`import { t }`, `import { t as tr }`). */
function importedT(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const st of source.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || !/(^|\/)l10n$/.test(st.moduleSpecifier.text)) continue;
    const bindings = st.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings))
      for (const e of bindings.elements) if ((e.propertyName ?? e.name).text === 't') names.add(e.name.text);
  }
  return names;
}

export function localizedStrings(root: string): { strings: LocalizedString[]; unreadable: UnreadableCall[] } {
  const strings: LocalizedString[] = [];
  const unreadable: UnreadableCall[] = [];
  const files = [
    ...tsFiles(join(root, 'src', 'extension')).map((f) => ({ f, webview: false })),
    ...tsFiles(join(root, 'src', 'shared')).map((f) => ({ f, webview: false })),
    // webview/shared/l10n.ts is the wrapper itself (its l10n.t(message) passes the caller's key on).
    ...tsFiles(join(root, 'webview'))
      .filter((f) => relative(root, f) !== join('webview', 'shared', 'l10n.ts'))
      .map((f) => ({ f, webview: true })),
  ];
  for (const { f, webview } of files) {
    const text = readFileSync(f, 'utf8');
    const source = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
    // In the webview only calls of the imported t() count (a local variable named t elsewhere is not a call to it).
    const webviewNames = webview ? importedT(source) : new Set<string>();
    const file = relative(root, f);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && isLocalizeCall(node, webviewNames)) {
        const first = node.arguments[0];
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)))
          strings.push({ message: first.text, file, line });
        else unreadable.push({ file, line, text: node.getText().slice(0, 120) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { strings, unreadable };
}

/** The `{0}`, `{1}`… placeholders of a message, sorted and without repeats. */
export function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\d+)\}/g)].map((m) => m[0]))].sort();
}

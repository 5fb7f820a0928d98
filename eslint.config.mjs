// Lint, including the layer boundaries of docs/architecture.md#import-rules: a wrong import fails `npm test`,
// not a review.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const restrict = (patterns, paths = []) => ({
  'no-restricted-imports': ['error', { paths, patterns }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules for the TypeScript sources. The project service finds each file's nearest tsconfig.json:
    // the root one (src, test, scripts, webview/*/logic) or webview/tsconfig.json (the DOM view).
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection, or a failure the user never sees).
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a void one is expected (event handlers, forEach) drops its rejection the same way.
      '@typescript-eslint/no-misused-promises': 'error',
      // A new union member (a protocol message, a tree node kind) must be handled wherever its union is switched on.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        require: 'readonly',
        __dirname: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: restrict([
      {
        group: ['node:*', 'vscode', 'better-sqlite3', '**/store/**', '**/extension/**', '**/agents/**', '**/cli/**'],
        message: 'src/shared is imported by the webview too: plain TypeScript only.',
      },
    ]),
  },
  {
    files: ['src/store/**/*.ts'],
    ignores: ['src/store/drivers/**', 'src/store/remote/**'],
    rules: restrict([
      {
        // src/cli is a program above the store (it uses the store and src/agents/command): nothing here points up.
        group: ['vscode', '**/extension/**', '**/agents/**', '**/cli/**', '**/webview/**'],
        message: 'The store is a library: no editor, agent-runner or command-line code.',
      },
      {
        group: ['better-sqlite3', 'node:sqlite'],
        message: 'Only src/store/drivers may load a SQLite driver; use the SqliteDatabase interface.',
      },
      { group: ['pg', 'ioredis'], message: 'Only src/store/remote may load the PostgreSQL and Redis drivers.' },
    ]),
  },
  {
    // The command line, a program of its own above src/store and src/agents (bundled as dist/cli.js and the store
    // package's bin, so it must run without VS Code and without an agent SDK). Its `run` runs the user's own agent
    // command: src/agents/command and src/agents/sdkSpans.ts load no agent SDK (lint-checked below), so the command
    // line may bundle them. Nothing else of src/agents.
    files: ['src/cli/**/*.ts'],
    rules: restrict([
      {
        group: [
          'vscode',
          '**/extension/**',
          '**/agents/*',
          '!**/agents/command',
          '!**/agents/check',
          '!**/agents/sdkSpans',
          '**/webview/**',
        ],
        message:
          'The CLI may use src/store, src/shared, src/agents/command and src/agents/check (no agent SDK), nothing else of src/agents.',
      },
      { group: ['better-sqlite3', 'node:sqlite'], message: 'Only src/store/drivers may load a SQLite driver.' },
      { group: ['pg', 'ioredis'], message: 'Only src/store/remote may load the PostgreSQL and Redis drivers.' },
    ]),
  },
  {
    // The server stores: the only place that loads pg and ioredis.
    files: ['src/store/remote/**/*.ts'],
    rules: restrict([
      {
        group: ['vscode', '**/extension/**', '**/agents/**', '**/cli/**', '**/webview/**'],
        message: 'The store is a library: no editor, agent-runner or command-line code.',
      },
      {
        group: ['better-sqlite3', 'node:sqlite'],
        message: 'Only src/store/drivers may load a SQLite driver; use the SqliteDatabase interface.',
      },
    ]),
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: restrict([{ group: ['pg', 'ioredis'], message: 'Only src/store/remote may load the PostgreSQL and Redis drivers.' }]),
  },
  {
    // core/ is the base every feature folder uses (docs/architecture.md#layers): if it imported a feature, that
    // feature and every feature using core would import each other. What needs a feature's types belongs to that
    // feature; `Services` and the tables live beside the composition root (src/extension/*.ts), which core cannot see.
    // (This block replaces the one above for core/, so it repeats its rule.)
    files: ['src/extension/core/**/*.ts'],
    rules: restrict([
      { group: ['pg', 'ioredis'], message: 'Only src/store/remote may load the PostgreSQL and Redis drivers.' },
      {
        regex: '^\\.\\./(?!\\.\\./)',
        message: "core/ imports no feature folder and not the composition root: move what needs a feature's types to that feature.",
      },
    ]),
  },
  {
    files: ['src/store/drivers/**/*.ts'],
    rules: restrict([
      { group: ['vscode', '**/extension/**', '**/agents/**', '**/cli/**', '**/webview/**'], message: 'The store is a library.' },
    ]),
  },
  {
    files: ['src/agents/**/*.ts'],
    rules: restrict([
      { group: ['vscode', '**/extension/**', '**/webview/**'], message: 'src/agents runs without VS Code.' },
      // The command line sits above src/agents (it bundles src/agents/command), so nothing here may point up to it.
      { group: ['**/cli/**'], message: 'src/cli is a program above src/agents; src/agents must not import it.' },
      { group: ['pg', 'ioredis'], message: 'Only src/store/remote may load the PostgreSQL and Redis drivers.' },
    ]),
  },
  {
    // What the CLI's `run` and `check` bundle must load no agent SDK: the command runner, the check (its cases, scratch
    // storage, graders and reports), and the SDK-span conversion it shares with the extension's runs (types from the
    // SDK are erased, so they are allowed).
    files: ['src/agents/command/**/*.ts', 'src/agents/check/**/*.ts', 'src/agents/sdkSpans.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@openai/agents', '@openai/agents-*', 'openai'],
              allowTypeImports: true,
              message: 'Agent commands run without an agent SDK (the CLI bundles them).',
            },
          ],
        },
      ],
    },
  },
  {
    // A notification draws `[label](command:…)` in its message as a link that runs the command: messages go through
    // src/extension/core/notices.ts, which writes every `](` so that none is drawn (words from outside are in many).
    files: ['src/extension/**/*.ts'],
    ignores: ['src/extension/core/notices.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['showErrorMessage', 'showWarningMessage', 'showInformationMessage', 'withProgress'].map((property) => ({
          property,
          message: 'Show notifications through src/extension/core/notices.ts (no links drawn from words in them).',
        })),
      ],
    },
  },
  {
    files: ['webview/**/*.ts'],
    rules: {
      // Database text must never become markup: no HTML-string sinks anywhere in the view.
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Insert text with textContent (webview/shared/dom.ts).' },
        { property: 'outerHTML', message: 'Insert text with textContent (webview/shared/dom.ts).' },
        { property: 'insertAdjacentHTML', message: 'Insert text with textContent (webview/shared/dom.ts).' },
        { object: 'document', property: 'write', message: 'Not in the webview.' },
      ],
      ...restrict([
        {
          group: ['vscode', 'node:*', '**/src/store/**', '**/src/extension/**', '**/src/agents/**', '**/src/cli/**', 'better-sqlite3'],
          message: 'The webview sees only src/shared.',
        },
      ]),
    },
  },
  {
    // CommonJS helpers loaded by mocha by path.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Playwright polls a waitForFunction predicate with eval inside the page: the webviews' CSP refuses it, so such a
    // wait passes only when its condition held at once and fails (a CSP violation) when it had to wait.
    files: ['test/e2e/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { property: 'waitForFunction', message: 'Wait on a locator (e.g. `:focus`) or evaluate a function instead.' },
      ],
    },
  },
);

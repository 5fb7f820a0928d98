/**
 * The set-up every UI spec shares: a fresh workspace folder with the spec's files, the packaged extension installed
 * into a code-server workbench in the chosen theme, artifacts (screenshot, DOM, console) saved for each failed test,
 * the workbench reset between tests, and everything closed and removed at the end.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Workbench, type WorkbenchOptions } from './workbench';
import { HOSTS } from '../../scripts/host/hostTools.mjs';
import { currentHost } from '../host/codeServer';

export const ROOT = resolve(__dirname, '..', '..');
export const VSIX = join(ROOT, 'dist', 'agent-session-inspector.vsix');
export const RESULTS = join(ROOT, 'test-results');
const ALL_THEMES = ['light', 'dark'] as const;
export type Theme = (typeof ALL_THEMES)[number];
/**
 * The themes this run draws every spec in: both, unless ASI_UI_THEMES names fewer. `npm test` runs the light theme on
 * the newest host and the dark one on the oldest, so every spec meets both themes in a run (docs/architecture.md,
 * "Tests": the theme changes only CSS); `ASI_UI_THEMES=light,dark` on the newest host redraws the docs' dark screenshots.
 */
export const THEMES: readonly Theme[] = (() => {
  const asked = process.env.ASI_UI_THEMES?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (!asked?.length) return ALL_THEMES;
  const unknown = asked.filter((t) => !(ALL_THEMES as readonly string[]).includes(t));
  if (unknown.length) throw new Error(`ASI_UI_THEMES names unknown themes: ${unknown.join(', ')} (known: ${ALL_THEMES.join(', ')})`);
  console.log(`UI specs in the ${asked.join(' and ')} theme only (ASI_UI_THEMES)`);
  return ALL_THEMES.filter((t) => asked.includes(t));
})();

/**
 * The themes a flow spec runs in: one (light where this run draws it, else the one it draws). A flow (export and import,
 * search, server stores, what-if runs, the Korean UI) checks what happens, not how it looks; the specs that check how
 * it looks (graph, conversation view, comparison, chart, tool renderers) run in every theme of `THEMES`, both when both
 * are asked for (the docs' screenshots).
 */
export const FLOW_THEMES: readonly Theme[] = THEMES.includes('light') ? ['light'] : THEMES.slice(0, 1);

/** Where the docs' screenshots live. */
export const DOCS_IMAGES = join(ROOT, 'docs', 'images');

/**
 * Saves the docs' screenshot `name` (`docs/images/<name>.png`) from the newest host only: the docs show the current
 * workbench, and an older host's picture would replace it (or add one nothing links to).
 */
export async function docsScreenshot(wb: Workbench, name: string): Promise<void> {
  if (currentHost().id !== HOSTS[HOSTS.length - 1]?.id) return;
  mkdirSync(DOCS_IMAGES, { recursive: true });
  await wb.screenshot(join(DOCS_IMAGES, `${name}.png`));
}

export interface WorkbenchSuite {
  /** The workbench, set once the suite's `before` hook has run. */
  readonly wb: Workbench;
  /** The workspace folder the workbench opened. */
  readonly workspace: string;
}

type OpenOptions = Omit<WorkbenchOptions, 'folder' | 'installVsix'>;

export interface WorkbenchSuiteOptions {
  /** A short name for the temporary folder and the failure artifacts' folder. */
  name: string;
  /** The colour theme; none keeps the workbench's default. */
  theme?: Theme;
  /** Writes the files the tests use into the workspace before the workbench starts. */
  prepare?: (workspace: string) => void | Promise<void>;
  /** More for `Workbench.open` (its settings are merged over the theme's); a function is called after `prepare`. */
  open?: OpenOptions | (() => OpenOptions);
  /** Reset the workbench (editors, dialogs, quick input) after each test. Default true. */
  reset?: boolean;
}

/**
 * Workbenches shared by the suites of this run, by what only a new server can change (its environment). Opening one
 * costs a server, a browser and a cold workbench (about 13 s a suite here, with the first view's warm-up); a suite
 * that can share takes a new window in a warm one instead (`Workbench.reopen`: its own folder, settings and storage).
 * A suite that needs its own page set-up (a display language, titles, a port, a development path) or files in the
 * server before its first window (`beforeWindow`) opens its own.
 */
const shared = new Map<string, Workbench>();
// A root hook: this module is first imported while mocha loads a spec file, outside any `describe`. The shared
// workbenches close after the last suite.
after(async function () {
  for (const w of shared.values()) await w.close();
  shared.clear();
});

function sharingKey(open: OpenOptions | undefined): string | undefined {
  const { settings: _settings, env, ...rest } = open ?? {};
  if (Object.values(rest).some((v) => v !== undefined)) return undefined;
  return JSON.stringify(env ?? {});
}

/**
 * Registers the suite's hooks in the calling `describe` and returns what its tests use. A spec's own hooks run in the
 * order mocha registers them: a `before` written above this call runs before the workbench opens (a model server
 * whose address goes into the settings), one written below runs after it.
 */
export function useWorkbench(options: WorkbenchSuiteOptions): WorkbenchSuite {
  let wb: Workbench | undefined;
  let workspace: string | undefined;
  let own = false;
  const label = options.theme ? `${options.name}-${options.theme}` : options.name;

  before(async function () {
    if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first.`);
    workspace = mkdtempSync(join(tmpdir(), `asi-e2e-${label}-`));
    await options.prepare?.(workspace);
    const theme = options.theme
      ? { 'workbench.colorTheme': options.theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' }
      : {};
    const open = typeof options.open === 'function' ? options.open() : options.open;
    const settings = { ...theme, ...open?.settings };
    const key = sharingKey(open);
    const warm = key === undefined ? undefined : shared.get(key);
    if (warm) {
      try {
        await warm.reopen(workspace, settings);
        wb = warm;
        return;
      } catch (err) {
        // A workbench an earlier suite broke: this suite gets a new one, and says why.
        console.log(`      the shared workbench did not reopen (${String(err)}): opening a new one`);
        shared.delete(key!);
        await warm.close({ keepState: true });
      }
    }
    wb = await Workbench.open({ ...open, folder: workspace, installVsix: [VSIX], settings });
    own = key === undefined;
    if (key !== undefined) shared.set(key, wb);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      const dir = join(RESULTS, 'failures', `${label}-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
      await wb?.saveArtifacts(dir);
      console.log(`      artifacts: ${dir}`);
    }
    // A reset that fails leaves the next test to cope (most open what they need anyway), but says so and how long it
    // took: up to three silent 30 s failures a run hid here until 2026-12-07.
    if (options.reset !== false) {
      const t = Date.now();
      await wb?.reset().catch((err: unknown) => {
        console.log(`      the reset after this test failed after ${Date.now() - t} ms: ${String(err).split('\n')[0]}`);
      });
    }
  });

  after(async function () {
    if (own) await wb?.close();
    else await wb?.release();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  return {
    get wb(): Workbench {
      if (!wb) throw new Error('the workbench is not open (its before hook failed or has not run)');
      return wb;
    },
    get workspace(): string {
      if (!workspace) throw new Error('the workspace folder is not made yet');
      return workspace;
    },
  };
}

/**
 * Starts and stops code-server (VS Code's web workbench with the normal Node extension host) for tests, with
 * throwaway state: its own user-data, extensions, XDG config/data/cache folders under one temp folder, bound to
 * 127.0.0.1 on a free port, no gallery, no telemetry, in its own process group so stopping it kills the extension
 * host too. Nothing is written to the home folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { HOSTS, codeServerPaths, hostById, hostEnv, type Host } from '../../scripts/host/hostTools.mjs';

/** The project folder: the nearest package.json of this project above this file (bundles move __dirname). */
export function projectRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'agent-session-inspector') return dir;
    if (dirname(dir) === dir) return resolve(__dirname, '..', '..');
  }
}

/**
 * The host the suites run in: `ASI_HOST` names one of hostTools' HOSTS (scripts/test.mjs runs each in turn);
 * by default the newest.
 */
export function currentHost(): Host {
  const id = process.env.ASI_HOST;
  return id ? hostById(id) : (HOSTS[HOSTS.length - 1] as Host);
}

/** The installed code-server of the current host, unless CODE_SERVER_BIN names another binary. */
export function codeServerBin(): string {
  return process.env.CODE_SERVER_BIN ?? codeServerPaths(currentHost()).bin;
}

/** A port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

const USER_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
  'chat.commandCenter.enabled': false,
  'window.commandCenter': false,
  'workbench.reduceMotion': 'on',
  'git.enabled': false,
  // Newer workbenches (1.139) open a chat side bar by default; it takes a third of every screenshot.
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

const userSettingsPath = (stateDir: string): string => join(stateDir, 'ud', 'User', 'settings.json');

export interface CodeServerOptions {
  /** The workspace folder to open (a fresh empty one when omitted). */
  folder?: string;
  /** VSIX files to install before starting (the packaged extension). */
  installVsix?: string[];
  /** Extra user settings. */
  settings?: Record<string, unknown>;
  /** Environment for the server and its extension host. */
  env?: Record<string, string>;
  /** Milliseconds to wait for /healthz. */
  startTimeoutMs?: number;
  /** A fixed port (default: a free one). */
  port?: number;
}

/** A running code-server; `stop()` kills its process group and removes its state unless asked to keep it. */
export class CodeServer {
  private exited = false;
  private constructor(
    readonly port: number,
    readonly stateDir: string,
    readonly folder: string,
    readonly logPath: string,
    private readonly child: ChildProcess,
  ) {
    child.on('exit', () => (this.exited = true));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** `vscode-remote://` URI of a server-side path, with the authority the browser uses. */
  remoteUri(path: string): string {
    return `vscode-remote://127.0.0.1:${this.port}${resolve(path)}`;
  }

  /**
   * The workbench URL for the server's folder (or `folder`), optionally with a launch payload (extension development
   * and tests paths).
   */
  workbenchUrl(payload?: [string, string][], folder = this.folder): string {
    let url = `${this.url}/?folder=${encodeURIComponent(folder)}`;
    if (payload) url += `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    return url;
  }

  /**
   * Replaces the user settings with the harness' own plus `settings`. A window opened afterwards reads them: this is
   * how a shared workbench (test/e2e/suite.ts) gives each suite its own settings.
   */
  writeUserSettings(settings: Record<string, unknown> = {}): void {
    writeFileSync(userSettingsPath(this.stateDir), JSON.stringify({ ...USER_SETTINGS, ...settings }, null, 1));
  }

  static async start(options: CodeServerOptions = {}): Promise<CodeServer> {
    const bin = codeServerBin();
    if (!existsSync(bin)) {
      throw new Error(
        `code-server is not installed at ${bin}. Run \`node scripts/host/hostTools.mjs host ${currentHost().id}\` first (npm test does this itself; it needs the npm registry and Debian packages).`,
      );
    }
    const stateDir = mkdtempSync(join(tmpdir(), 'asi-code-server-'));
    const dirs = Object.fromEntries(
      ['ud/User', 'exts', 'ws', 'xdg-config', 'xdg-data', 'xdg-cache'].map((d) => {
        const p = join(stateDir, d);
        mkdirSync(p, { recursive: true });
        return [d, p];
      }),
    ) as Record<string, string>;
    const port = options.port ?? (await freePort());
    const config = join(stateDir, 'config.yaml');
    writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
    writeFileSync(userSettingsPath(stateDir), JSON.stringify({ ...USER_SETTINGS, ...options.settings }, null, 1));
    const host = currentHost();
    // The host's Node first on PATH: code-server starts with `#!/usr/bin/env node` and forks its extension host
    // from the same binary, so that is the Node the extension runs on.
    const env: NodeJS.ProcessEnv = {
      ...hostEnv(host),
      ...options.env,
      ASI_HOST_VSCODE: host.vscode,
      ASI_HOST_NODE: host.node,
      XDG_CONFIG_HOME: dirs['xdg-config'],
      XDG_DATA_HOME: dirs['xdg-data'],
      XDG_CACHE_HOME: dirs['xdg-cache'],
      // An empty gallery: the marketplace is unreachable here and lookups would only fail and slow the workbench.
      EXTENSIONS_GALLERY: '{}',
    };
    const common = [
      '--config',
      config,
      '--user-data-dir',
      join(stateDir, 'ud'),
      '--extensions-dir',
      dirs.exts!,
      '--disable-telemetry',
      '--disable-update-check',
    ];
    for (const vsix of options.installVsix ?? []) {
      const r = spawnSync(bin, [...common, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120_000 });
      if (r.status !== 0) throw new Error(`Installing ${vsix} into code-server failed: ${r.stderr || r.stdout || r.error?.message}`);
    }
    const folder = options.folder ?? dirs.ws!;
    const logPath = join(stateDir, 'code-server.log');
    const log = createWriteStream(logPath);
    const child = spawn(
      bin,
      [
        ...common,
        ...(host.serverArgs ?? []),
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        folder,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env },
    );
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const server = new CodeServer(port, stateDir, folder, logPath, child);
    try {
      await server.waitHealthy(options.startTimeoutMs ?? 60_000);
    } catch (err) {
      await server.stop({ keepState: true });
      throw err;
    }
    return server;
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`code-server exited while starting (port ${this.port}); see ${this.logPath}`);
      // Each probe has its own timeout: a port held by something that accepts connections but never answers
      // would otherwise leave this await pending forever.
      const ok = await new Promise<boolean>((r) => {
        const req = get(`${this.url}/healthz`, { timeout: 1000 }, (res) => {
          res.resume();
          r(res.statusCode === 200);
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => r(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`code-server did not answer on ${this.url}/healthz within ${timeoutMs} ms; see ${this.logPath}`);
  }

  /** Kills the server and its extension host (the whole process group); removes the state folder unless kept. */
  async stop(options: { keepState?: boolean } = {}): Promise<void> {
    if (!this.exited && this.child.pid) {
      try {
        process.kill(-this.child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      const deadline = Date.now() + 5000;
      while (!this.exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (!this.exited) {
        try {
          process.kill(-this.child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
    if (!options.keepState) rmSync(this.stateDir, { recursive: true, force: true });
  }
}

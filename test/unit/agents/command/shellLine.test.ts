/**
 * One simple agent command is exec'd by the shell, not forked beside it (src/agents/command/shellLine.ts, issue 42);
 * every other command line runs exactly as written. The real-process cases run through `runCommandProcess`, the path
 * every run and check takes.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandProcess } from '../../../../src/agents/command/commandProcess';
import { shellLine } from '../../../../src/agents/command/shellLine';

describe('agent commands: the shell line', function () {
  this.timeout(15_000);

  it('puts exec before one simple command, quoted words, variables and flags with = included', () => {
    for (const c of [
      'python -m agent',
      '"/usr/bin/node" "/tmp/my agent/agent.cjs"',
      './venv/bin/python agent.py --model=gpt-5 $EXTRA',
      "npx tsx 'agent.ts' ~/x",
    ])
      assert.equal(shellLine(c, 'linux'), `exec ${c}`, c);
  });

  it('leaves lists, pipelines, subshells, redirections, assignments, keywords and builtins as written', () => {
    for (const c of [
      'cd agent && python main.py',
      'python a.py; python b.py',
      'python a.py | tee log',
      'python a.py 2>err.log',
      '(cd x; python a.py)',
      'OPENAI_BASE_URL=http://127.0.0.1:1 python a.py',
      'if true; then python a.py; fi',
      'time python a.py',
      'source venv/bin/activate',
      'exec python a.py',
      'python a.py # note',
      'python $(cat which) `x`',
      'python a.py\npython b.py',
      '   ',
    ])
      assert.equal(shellLine(c, 'linux'), c, c);
  });

  it('never changes a command line for cmd.exe', () => {
    assert.equal(shellLine('python -m agent', 'win32'), 'python -m agent');
  });

  if (process.platform !== 'win32') {
    const run = async (command: string, cwd?: string) => {
      const lines: string[] = [];
      const end = await runCommandProcess({ command, cwd, env: { ...process.env, MARK: 'm1' }, stdin: '', onLine: (l) => lines.push(l) });
      return { end, lines };
    };
    const node = JSON.stringify(process.execPath);

    it('the simple command is this process’s own child (no shell waiting beside it), its exit code its own', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'asi-shell-line-'));
      try {
        const script = join(dir, 'agent.cjs');
        writeFileSync(script, 'console.log(process.ppid, process.argv[2]); process.exit(7);\n');
        const { end, lines } = await run(`${node} "${script}" $MARK`);
        assert.deepEqual(lines, [`${process.pid} m1`]);
        assert.equal(end.code, 7);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a compound line still runs under the shell, with its meaning: assignments, &&, cd, variables', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'asi-shell-line-'));
      try {
        const { end, lines } = await run(
          `cd sub 2>/dev/null || cd . && X=x1 ${node} -e "console.log(process.env.X, process.env.MARK, process.ppid === ${process.pid})"`,
          dir,
        );
        assert.equal(end.code, 0);
        // The shell forked the program: its parent is the shell, not this process.
        assert.deepEqual(lines, ['x1 m1 false']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

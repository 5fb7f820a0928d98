/**
 * The user's own agent from the conversation view, in the real workbench: choosing an agent command in the composer,
 * its answer streaming into the view, its last run shown under the choice; Retry with models through the command;
 * Stop on a command that would run for ten minutes. The command is a real Python process
 * (test/fixtures/agent-commands/python_turn.py) that writes its turn in the Python SDK's format.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { FLOW_THEMES, ROOT, docsScreenshot, useWorkbench } from './suite';
import { openConversationView } from './workbench';

const FIXTURES = join(ROOT, 'test', 'fixtures');
const SCRIPT = join(FIXTURES, 'agent-commands', 'python_turn.py');
const hasPython = spawnSync('python3', ['--version']).status === 0;

async function until<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

async function stored(path: string, sessionId: string, branchId: string): Promise<{ turns: number[]; last: string }> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, readonly: true });
  try {
    const last = (await s.getStoredItems(undefined, branchId)).at(-1) as { content?: { text?: string }[] | string } | undefined;
    return {
      turns: (await s.getConversationTurns(branchId)).map((t) => t.turn),
      last: Array.isArray(last?.content) ? String(last.content[0]?.text) : String(last?.content),
    };
  } finally {
    s.close();
  }
}

for (const theme of FLOW_THEMES) {
  describe(`agent commands in the view (${theme} theme)`, function () {
    let db: string;

    before(function () {
      if (!hasPython) {
        console.log('    (skipped: python3 is not installed, so the Python agent command cannot run)');
        this.skip();
      }
    });

    const suite = useWorkbench({
      name: 'agent-commands',
      theme,
      prepare: (workspace) => {
        db = join(workspace, 'conversations.db');
        copyFileSync(join(FIXTURES, 'conformance', 'ref-multisession.db'), db);
      },
      open: () => ({
        settings: {
          'agentSessions.agent.model': 'loopback-model',
          'agentSessions.agent.models': ['loopback-mini', 'loopback-max'],
          'agentSessions.agent.command': {
            // Its runs send their spans (a CUSTOM agent-sessions.otlp event): the turn's Timeline draws them.
            'support-bot': `AGENT_FIXTURE_SPANS=1 python3 "${SCRIPT}"`,
            'slow-bot': `AGENT_FIXTURE_MODE=hang python3 "${SCRIPT}"`,
            // Exits 3 before any event: a failing run, for the what-if that must keep its outcome on screen.
            'broken-bot': `AGENT_FIXTURE_MODE=exit-at-once python3 "${SCRIPT}"`,
            // Exits 0 having written nothing: not a success (issue 40, item 3).
            'idle-bot': 'true',
          },
        },
      }),
    });

    it('the composer runs the chosen command: its answer streams in, and its last run shows under the choice', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane[data-branch="main"]').click();
      const picker = f.locator('.composer .agent-picker:not([hidden]) select.agent-select');
      await picker.waitFor();
      assert.deepEqual(await picker.locator('option').allTextContents(), [
        'Built-in agent (loopback-model)',
        'support-bot',
        'slow-bot',
        'broken-bot',
        'idle-bot',
      ]);
      await picker.selectOption('command:support-bot');
      await f.locator('.composer .agent-last', { hasText: 'Not run yet in this window.' }).waitFor();
      await f.locator('textarea.composer-input').fill('What should I pack?');
      await f.locator('vscode-button.composer-send').click();
      await f.locator('.run-text', { hasText: 'Answer from default: What should I pack?' }).waitFor({ timeout: 20_000 });
      await f.locator('.run-done', { hasText: "Saved turn 3 on branch 'main': 2 item(s) and its usage." }).waitFor({ timeout: 20_000 });
      await f.locator('.composer .agent-last.ok', { hasText: 'Last run: completed' }).waitFor();
      // The view moves to the new turn: its detail is loaded before the picture is taken.
      await f.locator('.turn-title', { hasText: 'Turn 3' }).waitFor();
      await docsScreenshot(suite.wb, `agent-command-composer-${theme}`);
      const main = await stored(db, 'alice', 'main');
      assert.deepEqual(main.turns, [1, 2, 3]);
      assert.equal(main.last, 'Answer from default: What should I pack?');
      // The spans the command sent, linked to the turn it wrote: its Timeline and its latency in the list.
      await f.locator('.timeline-section > summary').click();
      const spans = f.locator('.span-row');
      // The spans may arrive just after the run ends: the open Timeline then draws again by itself.
      await f.locator('.span-item:nth-child(4) .span-label', { hasText: 'execute_tool lookup_order' }).waitFor({ timeout: 20_000 });
      await spans.nth(3).waitFor({ timeout: 20_000 });
      assert.deepEqual(await spans.locator('.span-label').allTextContents(), [
        'invoke_agent support-bot',
        'no_secrets',
        'chat fixture-model',
        'execute_tool lookup_order',
      ]);
      await f.locator('.turn-row[data-turn="3"] .turn-latency', { hasText: 'fixture-model' }).waitFor({ timeout: 20_000 });
      await suite.wb.page.mouse.move(5, 5);
      await docsScreenshot(suite.wb, `timeline-command-${theme}`);
      // The Timeline stays open for the next turn shown: closed again for the tests after this one.
      await f.locator('.timeline-section > summary').click();
    });

    it('Retry with models through the command: the form offers the agent, and each model gets a branch of its own', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'bob');
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      await f.locator('.item-user vscode-button.retry-models').click();
      // The form starts from the workspace's choice (support-bot, picked in the composer).
      const formPicker = f.locator('.what-if-form select.agent-select');
      assert.equal(await formPicker.inputValue(), 'command:support-bot');
      await f.locator('.what-if-choice', { hasText: 'loopback-model' }).locator('input').uncheck();
      await f.locator('vscode-button.what-if-submit', { hasText: 'Retry on 2 models' }).click();
      // Not the runs' streaming cards: they are gone once both runs end and the view shows a branch, which on a fast
      // run happens before a wait for them starts (the streaming itself is the composer test's). What each model's
      // branch holds is checked in the file.
      for (const m of ['loopback-mini', 'loopback-max']) {
        const b = await until(async () => {
          const s = await stored(db, 'bob', `retry-${m}-1`).catch(() => undefined);
          return s && s.turns.length > 0 ? s : undefined;
        });
        assert.deepEqual(b.turns, [1], m);
        assert.match(b.last, new RegExp(`^Answer from ${m}: `), m);
      }
    });

    it('Stop ends a command that would run for minutes, and says so', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane[data-branch="main"]').click();
      const picker = f.locator('.composer select.agent-select');
      await picker.selectOption('command:slow-bot');
      await f.locator('textarea.composer-input').fill('Take your time');
      await f.locator('vscode-button.composer-send').click();
      await f.locator('.run-status', { hasText: 'slow-bot is answering on main' }).waitFor({ timeout: 20_000 });
      await f.locator('vscode-button.composer-stop:not([disabled])').click();
      await f.locator('.run-error.failure-cancelled', { hasText: 'Stopped: The run was stopped.' }).waitFor({ timeout: 20_000 });
      await f.locator('.composer .agent-last.failed', { hasText: 'Last run: stopped' }).waitFor();
      assert.deepEqual((await stored(db, 'alice', 'main')).turns, [1, 2, 3], 'nothing of the stopped run is stored');
    });

    it('a command that exits 0 without writing a turn is not Done: it says so, and the message stays in the box', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.composer select.agent-select').selectOption('command:idle-bot');
      const box = f.locator('textarea.composer-input');
      await box.fill('Are you there?');
      await f.locator('vscode-button.composer-send').click();
      await f
        .locator('.run-error', { hasText: "Failed: The agent command 'idle-bot' exited without writing a turn." })
        .waitFor({ timeout: 20_000 });
      assert.equal(await f.locator('.run-done').count(), 0, 'no "Done" for a run that saved nothing');
      assert.equal(await box.inputValue(), 'Are you there?');
      await f.locator('.composer .agent-last.failed').waitFor();
      assert.deepEqual((await stored(db, 'alice', 'main')).turns, [1, 2, 3]);
      await box.fill('');
    });

    it('a what-if through a failing command keeps its outcome and the selection; its branch is named for the agent model', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.composer select.agent-select').selectOption('command:broken-bot');
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await f.locator('.item-user vscode-button.retry-here').click();
      // The configured model with a command is the agent's own: the branch is not named after loopback-model.
      const block = f.locator('.run-block[data-branch="retry-own-model-1"]');
      await block
        .locator('.run-error', { hasText: "The agent command 'broken-bot' exited with code 3 before sending any event." })
        .waitFor({ timeout: 20_000 });
      // The fork is deleted again; the view is back on main at turn 2, and the failure is still there well after.
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(await block.locator('.run-error').count(), 1, 'the outcome stays until dismissed');
      assert.equal(await f.locator('.lane.selected[data-branch="main"]').count(), 1);
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      await block.locator('vscode-button.run-dismiss').click();
      await block.waitFor({ state: 'detached' });
    });
  });
}

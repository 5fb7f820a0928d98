/**
 * What-if runs from the conversation view in the real workbench: Retry from here and Retry with models in a turn's
 * detail, streaming into the new branches against a loopback model server, checked against the file. Screenshots of
 * the view during the retry, in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { RESULTS, ROOT, FLOW_THEMES, useWorkbench, docsScreenshot } from './suite';
import { openConversationView } from './workbench';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');

/** Polls `fn` until it returns a value (20 s at most). */
async function until<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

/** Per branch of the session: its turns and the turns with a usage row, read from the file. */
async function stored(path: string, branchId: string): Promise<{ turns: number[]; usage: number[]; last: unknown }> {
  const s = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: path, readonly: true });
  try {
    return {
      turns: (await s.getConversationTurns(branchId)).map((t) => t.turn),
      usage: (await s.getTurnUsage(undefined, branchId)).map((u) => u.userTurnNumber),
      last: (await s.getStoredItems(undefined, branchId)).at(-1),
    };
  } finally {
    s.close();
  }
}

for (const theme of FLOW_THEMES) {
  describe(`what-if runs in the view (${theme} theme)`, function () {
    let model: LoopbackOpenAI;
    let db: string;

    before(async function () {
      model = await startLoopbackOpenAI({
        script: (req) => {
          const answer = `${req.body.model} says: the answer to "${lastUserText(req.body)}" is forty-two, give or take.`;
          return { kind: 'text', text: answer, chunks: answer.split(/(?<= )/), delayMs: 120 };
        },
      });
    });

    after(async function () {
      await model?.close();
    });

    const suite = useWorkbench({
      name: 'whatif',
      theme,
      prepare: (workspace) => {
        db = join(workspace, 'conversations.db');
        copyFileSync(join(FIXTURES, 'ref-multisession.db'), db);
      },
      open: () => ({
        settings: {
          // A loopback model server: no API key is needed for a local server.
          'agentSessions.agent.baseUrl': model.baseUrl,
          'agentSessions.agent.model': 'loopback-model',
          'agentSessions.agent.models': ['loopback-mini', 'loopback-max'],
        },
      }),
    });

    const shot = async (name: string, docs?: string): Promise<void> => {
      mkdirSync(join(RESULTS, 'screens'), { recursive: true });
      await suite.wb.screenshot(join(RESULTS, 'screens', `${name}-${theme}.png`));
      if (docs) await docsScreenshot(suite.wb, `${docs}-${theme}`);
    };

    /** Compare tabs open now; a test waits for one more than before its run, so no comparison opens after it ended. */
    const compareTabs = (): Promise<number> => suite.wb.page.locator('.tab', { hasText: 'Compare ' }).count();
    const compareOpened = (before: number): Promise<boolean> => until(async () => ((await compareTabs()) > before ? true : undefined));

    it('Retry from here in the turn detail streams into a new branch that shares turn 1, with its usage stored', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      // The view comes back to the branch it last showed (a retry's): go to main.
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      const question = (await f.locator('.item-user .markdown').textContent())?.trim() ?? '';
      assert.ok(question, 'turn 2 has a user message');
      const before = model.requests.length;
      const tabs = await compareTabs();
      await f.locator('.item-user vscode-button.retry-here').click();
      await f.locator('.run-status', { hasText: 'is answering on retry-loopback-model-1 (forked from main @ turn 2)' }).waitFor();
      await f.locator('.run-text', { hasText: 'loopback-model says' }).waitFor({ timeout: 20_000 });
      await shot('40-retry-from-here', 'retry-from-here');
      // When the run ends the comparison opens (in front of the view): read the result from the file.
      const s = await until(async () => {
        const b = await stored(db, 'retry-loopback-model-1').catch(() => undefined);
        return b && b.usage.length > 0 ? b : undefined;
      });
      assert.deepEqual(s.turns, [1, 2], 'turn 1 shared, turn 2 sent again');
      assert.deepEqual(s.usage, [2], 'the retry stored its usage');
      assert.match(JSON.stringify(s.last), /loopback-model says/);
      const sent = model.requests.slice(before);
      assert.deepEqual(
        sent.map((r) => [r.body.model, lastUserText(r.body)]),
        [['loopback-model', question]],
      );
      await compareOpened(tabs);
    });

    it('Edit and resend opens an editor with the message, and sends the edited text on a new branch', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'alice');
      // The view comes back to the branch it last showed (a retry's): go to main.
      await f.locator('.lane[data-branch="main"]').click();
      await f.locator('.lane.selected[data-branch="main"]').waitFor();
      await f.locator('.turn-row[data-turn="2"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 2' }).waitFor();
      const question = (await f.locator('.item-user .markdown').textContent())?.trim() ?? '';
      await f.locator('.item-user vscode-button.edit-resend').click();
      const text = f.locator('textarea.what-if-text');
      assert.equal(await text.inputValue(), question, 'the editor starts with the message as sent');
      await text.fill('');
      await f.locator('.what-if-form .validation', { hasText: 'The message is empty.' }).waitFor();
      await text.fill(`A shorter one, please (${theme})`);
      const submit = f.locator('vscode-button.what-if-submit');
      assert.equal((await submit.textContent())?.trim(), 'Resend');
      const tabs = await compareTabs();
      await submit.click();
      await f.locator('.run-status', { hasText: 'is answering on edit-loopback-model-1 (forked from main @ turn 2)' }).waitFor();
      await until(async () => ((await stored(db, 'edit-loopback-model-1').catch(() => undefined))?.usage.length ? true : undefined));
      await compareOpened(tabs);
      const s = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: db, readonly: true });
      try {
        const items = (await s.getStoredItems(undefined, 'edit-loopback-model-1')) as { role?: string; content?: unknown }[];
        assert.deepEqual(
          items.filter((i) => i.role === 'user').map((i) => i.content),
          [items[0]?.content, `A shorter one, please (${theme})`],
        );
        assert.deepEqual(
          (await s.getTurnUsage(undefined, 'edit-loopback-model-1')).map((u) => u.userTurnNumber),
          [2],
        );
      } finally {
        s.close();
      }
    });

    it('Retry with models runs the picked models side by side, one new branch each', async () => {
      const f = await openConversationView(suite.wb, 'conversations.db', 'bob');
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      await f.locator('.item-user vscode-button.retry-models').click();
      const boxes = f.locator('.what-if-form input.what-if-model');
      await boxes.first().waitFor();
      const states: [string | null, boolean][] = [];
      for (let i = 0; i < (await boxes.count()); i++)
        states.push([await boxes.nth(i).getAttribute('value'), await boxes.nth(i).isChecked()]);
      assert.deepEqual(states, [
        ['loopback-model', true],
        ['loopback-mini', true],
        ['loopback-max', true],
      ]);
      await f.locator('.what-if-choice', { hasText: 'loopback-model' }).locator('input').uncheck();
      const tabs = await compareTabs();
      await f.locator('vscode-button.what-if-submit', { hasText: 'Retry on 2 models' }).click();
      await f.locator('.run-block').nth(1).waitFor();
      await f.locator('.run-text', { hasText: 'loopback-max says' }).waitFor({ timeout: 20_000 });
      await shot('41-retry-with-models', 'retry-with-models');
      await compareOpened(tabs);
      // The comparison grid: the original and each retry, with its model, tokens, cost and run time.
      const grid = await until(async () => {
        for (const frame of suite.wb.frames()) {
          const title = await frame.evaluate<string | null>("document.querySelector('h1.title')?.textContent ?? null").catch(() => null);
          if (title === 'Compare main ↔ loopback-mini ↔ loopback-max') return frame;
        }
        return undefined;
      });
      const cards = grid.locator('.compare-card');
      await cards.nth(2).locator('.stat', { hasText: 'Cost:' }).waitFor();
      assert.equal(await cards.count(), 3);
      for (const i of [1, 2]) assert.match((await cards.nth(i).textContent()) ?? '', /Run time: \d+\.\d s/);
      const row = grid.locator('.compare-row').first();
      assert.match((await row.locator('.row-head').textContent()) ?? '', /Turn 1.*differs/);
      assert.match((await row.locator('[data-column="2"] .diff-text').last().textContent()) ?? '', /loopback-max says/);
      await shot('42-retry-grid', 'retry-grid');
      for (const m of ['loopback-mini', 'loopback-max']) {
        const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: db, readonly: true });
        try {
          assert.deepEqual(
            (await s.getTurnUsage(undefined, `retry-${m}-1`)).map((u) => u.userTurnNumber),
            [1],
            m,
          );
          assert.match(JSON.stringify((await s.getStoredItems(undefined, `retry-${m}-1`)).at(-1)), new RegExp(`${m} says`));
        } finally {
          s.close();
        }
      }
    });
  });
}

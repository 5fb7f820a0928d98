/** The README's first command writes its demo through the real runner: check what lands in the file. */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../../scripts/demo';
import { writeDemoReviews } from '../../../scripts/demo/reviews';
import { selectCases } from '../../../src/agents/check/checkCases';
import { ReviewStore } from '../../../src/store/reviews/reviewStore';
import { AdvancedSQLiteSession, TraceStore, openSessionDatabase } from '../../../src/store';
import { tempDir } from '../../support/tempFiles';
import { DEMO_AGENT_SETTINGS, writeDemoAgentModule } from '../../../scripts/demo/agentModule';
import { runCheck } from '../../../src/agents/check/checkRun';
import { parseGraders } from '../../../src/agents/check/graders/graderSpec';
import { runOnBranch } from '../../../src/agents/branchRun';
import { loadUserAgentModule } from '../../../src/agents/userAgentModule';

describe('npm start demo database', function () {
  this.timeout(60_000);
  it('holds two sessions, three branches with fork points, tool calls and usage', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'conversations.db');
      await writeDemoDatabase(path);
      const db = openSessionDatabase(path);
      try {
        assert.deepEqual(
          db
            .listSessions()
            .map((s) => s.sessionId)
            .sort(),
          ['support-chat', 'weather-trip'],
        );
        const tree = db.getBranchTree('weather-trip').map((b) => [b.branchId, b.parentBranchId, b.forkTurn]);
        assert.deepEqual(tree, [
          ['main', null, null],
          ['lisbon-instead', 'main', 3],
          ['oslo-retry', 'main', 4],
        ]);
      } finally {
        db.close();
      }
      const s = new AdvancedSQLiteSession({ sessionId: 'weather-trip', dbPath: path, readonly: true });
      try {
        const tools = await s.getToolUsage('main');
        assert.deepEqual(
          tools.map((t) => [t.toolName, t.turn]),
          [
            ['get_weather', 2],
            ['convert_temperature', 3],
            ['get_weather', 3],
            ['get_weather', 4],
          ],
        );
        assert.deepEqual(
          (await s.getTurnUsage(undefined, 'lisbon-instead')).map((u) => u.userTurnNumber),
          [3, 4],
        );
        const usage = await s.getSessionUsage();
        assert.ok(usage && usage.totalTurns === 7 && usage.totalTokens > 0);
        const answer = (await s.getItems(1, 'lisbon-instead'))[0] as { content: { text: string }[] };
        assert.match(answer.content[0]!.text, /Paris: 18°C, light rain/);
      } finally {
        s.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it('records a trace for every turn it runs, linked to its session, branch and turn, as the extension records its runs', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'conversations.db');
      const tracesPath = join(tmp.dir, 'profile', 'traces.db');
      await writeDemoDatabase(path, tracesPath);
      const store = TraceStore.open(tracesPath, { readonly: true });
      try {
        // Every turn a demo run wrote (a branch's turns before its fork are its parent's runs).
        const runs: [string, string, number, string[]][] = [
          ['weather-trip', 'main', 1, []],
          ['weather-trip', 'main', 2, ['get_weather']],
          ['weather-trip', 'main', 3, ['convert_temperature', 'get_weather']],
          ['weather-trip', 'main', 4, ['get_weather']],
          ['weather-trip', 'lisbon-instead', 3, ['convert_temperature', 'get_weather']],
          ['weather-trip', 'lisbon-instead', 4, ['get_weather']],
          ['weather-trip', 'oslo-retry', 4, ['get_weather']],
          ['support-chat', 'main', 1, []],
          ['support-chat', 'main', 2, ['convert_temperature', 'get_weather']],
        ];
        for (const [sessionId, branchId, turnNumber, tools] of runs) {
          const what = `${sessionId}/${branchId} turn ${turnNumber}`;
          const traces = store.tracesOfTurn({ sessionId, branchId, turnNumber });
          assert.equal(traces.length, 1, what);
          assert.equal(traces[0]!.linkedBy, 'run', what);
          const spans = store.spansOfTurn({ sessionId, branchId, turnNumber });
          assert.ok(
            spans.some((s) => s.kind === 'agent'),
            what,
          );
          const models = spans.filter((s) => s.kind === 'model');
          assert.ok(models.length >= 1, what);
          for (const m of models) assert.ok(m.model && m.inputTokens !== null, `${what}: a model request with its model and usage`);
          assert.deepEqual(
            spans
              .filter((s) => s.kind === 'tool')
              .map((s) => s.toolName)
              .sort(),
            tools,
            what,
          );
        }
        assert.equal(store.counts().traces, runs.length);
      } finally {
        store.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it("reviews a few of its turns, each a check case on the demo's file: good weather turns and a bad one with a correction", async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'conversations.db');
      const reviewsPath = join(tmp.dir, 'profile', 'reviews.db');
      await writeDemoDatabase(path);
      await writeDemoReviews(path, reviewsPath);
      const store = ReviewStore.open(reviewsPath, { readonly: true });
      const reviews = store.exportData();
      store.close();
      const db = openSessionDatabase(path, { readonly: true });
      try {
        const selection = await selectCases(db, reviews);
        assert.deepEqual(selection.orphaned, [], 'every review finds its turn');
        assert.equal(selection.withoutExpectation, 0);
        assert.deepEqual(
          selection.cases.map((c) => [c.id, c.verdict, c.expected.trajectory?.map((t) => t.name) ?? null]),
          [
            // The bad turn's calls were part of the answer reviewed bad: no trajectory to expect.
            ['weather-trip/lisbon-instead/4', 'bad', null],
            ['weather-trip/main/2', 'good', ['get_weather']],
            ['weather-trip/main/4', 'good', ['get_weather']],
            ['weather-trip/oslo-retry/4', 'good', ['get_weather']],
          ],
        );
        assert.equal(selection.cases[0]!.expected.answer, 'Paris is at 18°C with light rain right now: take an umbrella.');
        assert.match(selection.cases[1]!.expected.answer ?? '', /Paris: 18°C, light rain/);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it("checks its reviewed turns with the built-in agent out of the box: the folder's agent module, no key, no network; the unfixed bad turn fails", async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'conversations.db');
      await writeDemoDatabase(path);
      const reviews = join(tmp.dir, 'reviews.db');
      await writeDemoReviews(path, reviews);
      const module = await writeDemoAgentModule(tmp.dir, join(__dirname, '..', '..', '..'));
      assert.equal(DEMO_AGENT_SETTINGS['agentSessions.agent.module'], 'demo-agent.cjs');
      // As the extension loads it: a factory handed the extension's SDK, in a trusted workspace.
      const { agent, sameSdk } = await loadUserAgentModule(module, { trusted: true, baseDir: tmp.dir, allowedRoot: tmp.dir });
      assert.equal(sameSdk, true);
      const r = ReviewStore.open(reviews, { readonly: true });
      const data = r.exportData();
      r.close();
      const db = openSessionDatabase(path, { readonly: true });
      try {
        const selection = await selectCases(db, data);
        const { report } = await runCheck({
          file: path,
          db,
          cases: selection.cases,
          agent: { kind: 'runner', name: 'built-in', run: (request) => runOnBranch({ ...request, agent, input: request.input as never }) },
          graders: parseGraders(['trajectory']),
          scratchParent: tmp.dir,
        });
        // The good turns pass on their calls. The bad one fails whatever the graders: the demo's agent, which recorded
        // it, still gives the answer its reviewer marked bad (nobody fixed it: docs/check.md, "Try it on the demo").
        assert.deepEqual(
          report.results.map((x) => `${x.status} ${x.case.id} ${x.error ?? x.graders.map((g) => `${g.grader}: ${g.reason}`).join('; ')}`),
          selection.cases.map((c) =>
            c.verdict === 'bad'
              ? `fail ${c.id} not-rejected: repeats the answer reviewed as bad (the same text, ignoring case and whitespace)`
              : `pass ${c.id} trajectory: 1 tool call as recorded (get_weather)`,
          ),
        );
        assert.deepEqual(
          selection.cases.filter((c) => c.verdict === 'bad').map((c) => c.id),
          ['weather-trip/lisbon-instead/4'],
        );
        assert.ok(report.results.length >= 3, `${report.results.length} cases`);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});

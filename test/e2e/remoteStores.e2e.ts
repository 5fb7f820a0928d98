/**
 * A PostgreSQL store in the workbench, through the packaged extension and the UI a user clicks: *Open Session
 * Store…* with an address and a password typed into the prompts, the store in the tree, a Python-written session's
 * turns, and the conversation view on it. Screenshots in the light and the dark theme.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_POSTGRES_TABLES, postgresDdl } from '../../src/store';
import { splitPassword } from '../../src/extension/databases/remoteAddress';
import { startPostgres, type PostgresServer } from '../../scripts/host/servers.mjs';
import { RESULTS, FLOW_THEMES, useWorkbench } from './suite';
import { viewFrame } from './workbench';

/** Compact JSON with ASCII escapes: what SQLAlchemySession stores. */
function row(item: unknown): string {
  return JSON.stringify(item).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

const TRIP = [
  { role: 'user', content: 'Plan a weekend in Lisbon for two, on a budget.' },
  { type: 'function_call', call_id: 'call_w', name: 'get_weather', arguments: '{"city":"Lisbon","days":2}', status: 'completed' },
  { type: 'function_call_output', call_id: 'call_w', output: 'Sat 24 °C sunny · Sun 22 °C light wind' },
  {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [
      {
        type: 'output_text',
        annotations: [],
        text: 'Good news: sunny all weekend.\n\n**Saturday** — Alfama on foot, tram 28, sunset at the Miradouro da Senhora do Monte.\n**Sunday** — Belém (pastéis!), then the riverside to LX Factory.',
      },
    ],
  },
  { role: 'user', content: 'Where can we eat well for under €20 each?' },
  {
    type: 'function_call',
    call_id: 'call_r',
    name: 'search_restaurants',
    arguments: '{"city":"Lisbon","max_price_eur":20}',
    status: 'completed',
  },
  {
    type: 'function_call_output',
    call_id: 'call_r',
    output: '[{"name":"Taberna da Rua das Flores","price":18},{"name":"O Trevo","price":9}]',
  },
  {
    id: 'msg_2',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [
      {
        type: 'output_text',
        annotations: [],
        text: 'Try **Taberna da Rua das Flores** (about €18) and **O Trevo** for a bifana (about €9).',
      },
    ],
  },
];

for (const theme of FLOW_THEMES) {
  describe(`PostgreSQL store in the workbench (${theme} theme)`, function () {
    let server: PostgresServer;

    before(async function () {
      server = await startPostgres();
      const pool = new pg.Pool({ connectionString: server.url, max: 1 });
      try {
        for (const ddl of postgresDdl(DEFAULT_POSTGRES_TABLES)) await pool.query(ddl);
        for (let i = 0; i < 12; i++) {
          const id = `support-ticket-${4810 + i}`;
          await pool.query(`INSERT INTO agent_sessions (session_id, updated_at) VALUES ($1, now() - make_interval(hours => $2::int))`, [
            id,
            i + 1,
          ]);
          await pool.query('INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2), ($1, $3)', [
            id,
            row({ role: 'user', content: `Order #${9000 + i} has not arrived yet.` }),
            row({
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: 'Let me check that for you.', annotations: [] }],
            }),
          ]);
        }
        await pool.query(`INSERT INTO agent_sessions (session_id) VALUES ('trip-lisbon')`);
        for (const item of TRIP)
          await pool.query('INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2)', ['trip-lisbon', row(item)]);
      } finally {
        await pool.end();
      }
    });

    after(async function () {
      await server?.stop();
    });

    const suite = useWorkbench({ name: 'pg', theme });

    const shot = async (name: string): Promise<void> => {
      mkdirSync(join(RESULTS, 'screens'), { recursive: true });
      await suite.wb.screenshot(join(RESULTS, 'screens', `${name}-${theme}.png`));
    };

    it('opens a PostgreSQL address with the password typed into its own prompt, read-only, and lists its sessions', async () => {
      const { address, password } = splitPassword(server.url);
      await suite.wb.openSidebar();
      await suite.wb.runCommand('Agent Sessions: Open Session Store…');
      await suite.wb.answer(address);
      // The second prompt replaces the first in the same widget: wait for it, or the text goes into the old one.
      await suite.wb.page.locator('.quick-input-widget', { hasText: 'Password for' }).waitFor();
      await suite.wb.answer(password ?? '');
      const label = `${server.user}@127.0.0.1:${server.port}/${server.database}`;
      const store = await suite.wb.treeRow(label).waitFor(30_000);
      assert.match(await store.description(), /PostgreSQL · read-only · 13 sessions/);
      await store.expand();
      await suite.wb.treeRow('trip-lisbon').waitFor();
      await suite.wb.treeRow('trip-lisbon').expand();
      await suite.wb.treeRow('main').expand();
      await suite.wb.treeRow('Turn 2').waitFor();
      await shot('30-postgres-store-tree');
    });

    it('shows a Python-written PostgreSQL session in the conversation view', async () => {
      await suite.wb.openSidebar();
      await suite.wb.treeRow('trip-lisbon').contextMenu('Open Conversation View');
      const f = await viewFrame(suite.wb);
      await f.locator('.turn-row').nth(1).waitFor({ timeout: 20_000 });
      await f.locator('.turn-row[data-turn="1"]').click();
      await f.locator('.turn-title', { hasText: 'Turn 1' }).waitFor();
      assert.match((await f.locator('.item-assistant .markdown').first().textContent()) ?? '', /sunny all weekend/);
      await f.locator('text=get_weather').first().waitFor();
      await shot('31-postgres-conversation-view');
    });
  });
}

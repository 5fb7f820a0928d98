/**
 * `agent-sessions doctor <postgresql://… | redis://…> [--session S] [--json]` (docs/doctor.md, "Server stores"): the
 * report of a server store, read-only. `--fix` and `--backup` are refused before anything connects: a repair there
 * would race the agents writing to the store without a lock the SDKs take too, and a backup of a server is the
 * server's own tools' job.
 */
import { findingCount } from '../store/doctor/doctorReport';
import { checkServerStore } from '../store/doctor/server/serverDoctor';
import type { CommandContext } from './commands';
import type { DoctorArgs } from './doctorCommand';
import { reportJson, reportText } from './doctorCommand';
import { EXIT, UsageError } from './exitCodes';

export async function doctorServerCommand(ctx: CommandContext, address: string, args: DoctorArgs): Promise<number> {
  if (args.fix || args.backup !== undefined)
    throw new UsageError(
      'server stores are checked read-only: --fix and --backup repair session files only (docs/doctor.md, "Server stores")',
    );
  const report = await checkServerStore({
    url: address,
    // As every command that opens a server: the password may stay out of the address and the shell's history.
    password: process.env.AGENT_SESSIONS_PASSWORD || undefined,
    keyPrefix: ctx.store?.keyPrefix,
    ...(args.session === undefined ? {} : { session: args.session }),
  });
  if (ctx.json) process.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
  else await ctx.term.page(reportText(report, ctx.term.color));
  return findingCount(report) > 0 ? EXIT.error : EXIT.ok;
}

import { formatProblem, formatProblems } from '../config/format.js';
import { ConfigUnreadableError, daemonConfigErrors, loadConfig } from '../config/load.js';
import { settingProblems } from '../config/start-checks.js';
import type { LoadedConfig } from '../config/types.js';
import { resolveConfigPath } from './config-path.js';
import { warnDaemonProblems } from './daemon-problems.js';
import { CliError, EXIT, type CliIo } from './io.js';

// How commands other than `run` and `validate` read the config: the same checker as the
// daemon's, so that a config `run` would refuse is never used without a word.

/**
 * The whole config (daemon file and campaign files). An unreadable daemon file is exit 2
 * with its problems; the daemon file's errors are warnings (see warnDaemonProblems).
 */
export async function loadCommandConfig(configFlag: string | undefined, io: CliIo): Promise<LoadedConfig> {
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(resolveConfigPath(configFlag, io), io.env, { cwd: io.cwd });
  } catch (err) {
    if (!(err instanceof ConfigUnreadableError)) throw err;
    if (err.problems.length > 1) io.stderr.write(`${formatProblems(err.problems, { cwd: io.cwd })}\n`);
    throw new CliError(err.problems.length === 1 ? formatProblem(err.problems[0]!, io.cwd) : `${err.message} (see above)`, EXIT.usage);
  }
  warnDaemonProblems([...daemonConfigErrors(loaded), ...settingProblems(loaded.daemon, loaded.daemonSource, io.env)], io);
  return loaded;
}

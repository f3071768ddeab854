// `validate --online`: the token is accepted and every campaign's assistant exists and is
// outbound. The service is reached through a narrow port so that tests can pass a fake lister
// or a client on a real simulator.
import { readFile } from 'node:fs/promises';
import { ServiceError } from '../service/errors.js';
import { formatPath, parseSource } from './source.js';
import type { CampaignConfig, ConfigProblem, LoadedConfig } from './types.js';

/** What the online check needs from the service client. */
export interface OutboundAssistantLister {
  listOutboundAssistants(): Promise<readonly { id: number | string; name?: string | null; type?: string | null }[]>;
}

/** Ask the service for the outbound assistants and check every campaign against them. */
/** `account`: with accounts:, the account checked (loaded then holds only its campaigns) and where its token is set. */
export async function checkOnline(loaded: LoadedConfig, service: OutboundAssistantLister, account?: { name: string; tokenField: string }): Promise<ConfigProblem[]> {
  const daemonFile = loaded.daemon.file;
  const tokenField = account?.tokenField ?? (loaded.daemon.api.tokenFile ? 'api.token_file' : undefined);
  let assistants: Awaited<ReturnType<OutboundAssistantLister['listOutboundAssistants']>>;
  try {
    assistants = await service.listOutboundAssistants();
  } catch (err) {
    const kind = err instanceof ServiceError ? err.kind : 'network';
    const problem: ConfigProblem = { file: daemonFile, field: 'api.base_url', message: '', severity: 'error' };
    if (kind === 'token-rejected') {
      problem.field = tokenField ?? 'CAMPAIGND_API_TOKEN';
      problem.message = account ? `the service rejected the API token of account ${account.name}` : 'the service rejected the API token';
      problem.hint = 'put a valid token in the token file or CAMPAIGND_API_TOKEN (the service answered 401/403, a redirect or a non-JSON page)';
    } else if (kind === 'network' || kind === 'server') {
      problem.message = `cannot reach the service at ${loaded.daemon.api.baseUrl} (${kind === 'server' ? 'server error' : 'no connection'})`;
      problem.hint = 'check api.base_url and the network, then run validate --online again';
    } else {
      problem.message = `the service refused to list outbound assistants (${kind}${err instanceof ServiceError && err.status ? ` ${err.status}` : ''})`;
      problem.hint = 'check api.base_url: it must be the service base URL, without /api/user';
    }
    return [problem];
  }
  const outbound = assistants.filter((a) => !a.type || a.type === 'outbound');
  const known = new Map(outbound.map((a) => [String(a.id), a.name ?? '']));
  const problems: ConfigProblem[] = [];
  for (const campaign of loaded.campaigns) {
    // With variants, every variant's assistant must exist: a missing one stops the campaign at its first call.
    const used = campaign.variants?.map((v, i) => ({ id: v.assistantId, field: ['assistants', i, 'id'] as (string | number)[] })) ?? [{ id: campaign.assistantId, field: ['assistant_id'] }];
    for (const { id, field } of used) {
      if (!known.has(String(id))) problems.push(await assistantProblem(campaign, id, field, known));
    }
  }
  return problems;
}

async function assistantProblem(campaign: CampaignConfig, assistantId: number, field: (string | number)[], known: Map<string, string>): Promise<ConfigProblem> {
  const list = [...known].slice(0, 10).map(([id, name]) => (name ? `${id} (${name})` : id));
  const problem: ConfigProblem = {
    file: campaign.file,
    field: formatPath(field),
    message: `assistant ${assistantId} is not one of this account's outbound assistants`,
    hint: list.length > 0 ? `use the id of an outbound assistant: ${list.join(', ')}` : 'the account has no outbound assistant: create one first',
    severity: 'error',
  };
  try {
    const position = parseSource(campaign.file, await readFile(campaign.file, 'utf8')).locate(field);
    if (position) {
      problem.line = position.line;
      problem.column = position.column;
    }
  } catch {
    // The position is a courtesy; the problem stands without it.
  }
  return problem;
}

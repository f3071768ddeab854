import { describe, expect, it } from 'vitest';
import { parseDaemonFile } from '../../src/config/daemon.js';

const parse = (yaml: string) => parseDaemonFile('/etc/campaignd.yaml', `api: { base_url: https://s.example }\n${yaml}`, {}, '/');

describe('config: results', () => {
  it('defaults to keeping everything', () => {
    expect(parse('').daemon?.results).toEqual({ keepTranscripts: true, retentionDays: null });
  });
  it('reads keep_transcripts and retention_days', () => {
    expect(parse('results: { keep_transcripts: false, retention_days: 90 }').daemon?.results).toEqual({ keepTranscripts: false, retentionDays: 90 });
  });
  it('names the field and the fix of a bad value', () => {
    const { problems } = parse('results:\n  retention_days: -3\n  keep_transcripts: maybe\n');
    expect(problems.map((p) => [p.field, p.line])).toEqual([
      ['results.retention_days', 3],
      ['results.keep_transcripts', 4],
    ]);
  });

  it('reads hooks and names a bad event type', () => {
    const ok = parse('hooks:\n  - url: https://crm.example/h\n    secret_env: CRM_SECRET\n    events: [lead.final, attempt.ended]\n');
    expect(ok.problems).toEqual([]);
    expect(ok.daemon?.hooks).toEqual([{ url: 'https://crm.example/h', secretEnv: 'CRM_SECRET', events: ['lead.final', 'attempt.ended'] }]);
    const bad = parse('hooks:\n  - url: https://crm.example/h\n    secret_env: CRM_SECRET\n    events: [lead.done]\n');
    expect(bad.problems.map((p) => [p.field, p.line])).toEqual([['hooks[0].events[0]', 5]]);
    const missing = parse('hooks:\n  - url: https://crm.example/h\n');
    expect(missing.problems.map((p) => p.field)).toEqual(expect.arrayContaining(['hooks[0].secret_env', 'hooks[0].events']));
  });
});

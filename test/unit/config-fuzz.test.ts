import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_FIELDS } from '../../src/config/campaign-spec.js';
import { parseCampaignFile } from '../../src/config/campaign.js';
import { parseDaemonFile } from '../../src/config/daemon.js';

// Whatever a person writes, checking never throws: it yields a campaign or problems that each
// name a file, and an error-free result always has a campaign.
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('monday', 'funday', '09:00', '25:00', '2026-02-30', 'Europe/Berlin', 'leads.csv', 'US', -1, 0, 1.5, 12, true, null),
);
const campaignObject = fc.dictionary(fc.constantFrom(...Object.keys(CAMPAIGN_FIELDS), 'unknown_key', 'alowed_days'), anyValue, { maxKeys: 12 });

describe('config checking is total', () => {
  it('parseCampaignFile never throws on any mapping of field values (YAML and JSON)', () => {
    fc.assert(
      fc.property(campaignObject, fc.boolean(), (obj, asJson) => {
        const file = asJson ? '/tmp/f.json' : '/tmp/f.yaml';
        const { campaign, problems } = parseCampaignFile(file, asJson ? JSON.stringify(obj) : stringify(obj));
        for (const p of problems) expect(p.file).toBe(file);
        const errors = problems.filter((p) => p.severity === 'error');
        expect(campaign === undefined).toBe(errors.length > 0);
      }),
      { numRuns: 300 },
    );
  });

  it('parseCampaignFile never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const { campaign, problems } = parseCampaignFile('/tmp/t.yaml', text);
        expect(campaign !== undefined || problems.length > 0).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('parseDaemonFile never throws and always yields a config or syntax errors', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('api', 'database', 'http', 'log', 'max_calls_in_parallel', 'webhook'), anyValue, { maxKeys: 6 }), (obj) => {
        const result = parseDaemonFile('/tmp/d.yaml', stringify(obj), {}, '/tmp');
        expect(result.daemon !== undefined || result.syntaxErrors.length > 0).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

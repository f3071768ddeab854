// lead_columns in a campaign file: normalised into CampaignConfig.leadColumns, and every
// mistake reported with the file, line and field.
import { describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';

const BASE = [
  'assistant_id: 1',
  'allowed_days: [monday]',
  'allowed_hours_start_time: "09:00"',
  'allowed_hours_end_time: "17:00"',
  'leads: { file: leads.xlsx }',
];

function parse(...lines: string[]): ReturnType<typeof parseCampaignFile> {
  return parseCampaignFile('/srv/campaigns/spring.yaml', [...BASE, ...lines, ''].join('\n'));
}

describe('lead_columns', () => {
  it('is read into the campaign as written', () => {
    const { campaign, problems } = parse(
      'lead_columns:',
      '  phone_number: Phone',
      '  timezone: TZ',
      '  secondary_phone_numbers: [Mobile, Work]',
      '  variables: { first_name: Vorname, city: Ort }',
    );
    expect(problems).toEqual([]);
    expect(campaign?.leadColumns).toEqual({ phone_number: 'Phone', timezone: 'TZ', secondary_phone_numbers: ['Mobile', 'Work'], variables: { first_name: 'Vorname', city: 'Ort' } });
  });

  it('reports a bad field with its file, line, field and a hint', () => {
    const { campaign, problems } = parse('lead_columns:', '  phone: Phone', '  secondary_phone_numbers: Mobile', '  variables: { first_name: 3 }');
    expect(campaign).toBeUndefined();
    expect(problems).toEqual([
      expect.objectContaining({ file: '/srv/campaigns/spring.yaml', line: 7, field: 'lead_columns.phone', message: 'unknown field "phone" (did you mean "phone_number"?)', severity: 'error' }),
      expect.objectContaining({ line: 8, field: 'lead_columns.secondary_phone_numbers', severity: 'error' }),
      expect.objectContaining({ line: 9, field: 'lead_columns.variables.first_name', severity: 'error' }),
    ]);
  });

  it('warns when the leads come from the service, where there are no columns', () => {
    const { campaign, problems } = parseCampaignFile(
      '/srv/campaigns/remote.yaml',
      [...BASE.slice(0, 4), 'leads: { remote_campaign_id: 7 }', 'lead_columns: { phone_number: Phone }', ''].join('\n'),
    );
    expect(campaign).toBeDefined();
    expect(problems).toEqual([expect.objectContaining({ line: 6, field: 'lead_columns', severity: 'warning' })]);
  });
});

// `campaignd validate` on a campaign with a pre-dial check: a bad field is an error at its
// line; the secret's variable unset is a warning naming it (the check would fail and the
// leads wait), and it is quiet once the variable is set.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { validateCommand } from '../../src/cli/validate.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function validate(predial: string, env: Record<string, string>): Promise<{ code: number; text: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-predial-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(
    path.join(dir, 'campaigns', 'checked.yaml'),
    `assistant_id: 1\ntimezone: UTC\nallowed_days: [mon]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 3 }\n${predial}`,
  );
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${path.join(dir, 'c.db')}\ncampaigns_dir: ./campaigns\n`);
  const out = { text: '' };
  const sink = new Writable({ write(chunk: Buffer, _e, cb) { out.text += String(chunk); cb(); } });
  const io: CliIo = { stdout: sink, stderr: new Writable({ write: (_c, _e, cb) => cb() }), env: { CAMPAIGND_WEBHOOK_SECRET: 'w', CAMPAIGND_API_TOKEN: 't', ...env }, cwd: dir };
  const code = await validateCommand(['--config', path.join(dir, 'campaignd.yaml')], io);
  return { code, text: out.text };
}

describe('validate: predial', () => {
  const good = 'predial:\n  url: https://crm.example/check\n  secret_env: CRM_PREDIAL_SECRET\n  timeout_ms: 2000\n';

  it('warns when the secret variable is unset, and is quiet once it is set', async () => {
    const unset = await validate(good, {});
    expect(unset.code).toBe(0);
    expect(unset.text).toContain('predial.secret_env: $CRM_PREDIAL_SECRET is not set, so every pre-dial check of checked fails and its leads wait (none is called unchecked)');
    const set = await validate(good, { CRM_PREDIAL_SECRET: 's' });
    expect(set.text).not.toContain('predial');
  });

  it('is an error at the line of a bad field', async () => {
    const bad = await validate('predial:\n  url: https://crm.example/check\n  secret_env: CRM_PREDIAL_SECRET\n  timeout_ms: 60000\n', { CRM_PREDIAL_SECRET: 's' });
    expect(bad.code).toBe(1);
    expect(bad.text).toMatch(/checked\.yaml:10:\d+ predial\.timeout_ms: /);
  });
});

// Every command says the same thing the same way (issues 22 and 26): the README's command
// table and each command's --help name the same options, every option a help names is one
// the command accepts, a mistyped option is campaignd's own line with the command's usage
// (exit 2), `campaign` answers --json and says when there is nothing to do, and a daemon
// file `run` would refuse is never used by another command without a word.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { COMMAND_NAMES, main } from '../../src/main.js';
import { ROOT } from '../helpers/processes.js';
import { Capture } from '../helpers/capture.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-cli-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function campaignd(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = { stdout, stderr, env: { CAMPAIGND_WEBHOOK_SECRET: 'x' }, cwd: dir };
  const code = await main(argv, io);
  return { code, out: stdout.text, err: stderr.text };
}

/** The words before the options: `store copy`, the others their name alone. */
const commandWords = (name: string): string[] => (name === 'store' ? ['store', 'copy'] : [name]);
const optionsIn = (text: string): string[] => [...new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]))].filter((o) => o !== '--help').sort();

/** The README's command table: each command's row, by name. */
function readmeRows(): Map<string, string> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Commands\n'), readme.indexOf('\n## ', readme.indexOf('## Commands\n') + 1));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| `campaignd ([a-z][a-z-]*)/.exec(line);
    if (m) rows.set(m[1]!, line);
  }
  return rows;
}

describe('help and README agree', () => {
  const rows = readmeRows();

  it('the README lists every command, and no other', () => {
    expect([...rows.keys()].sort()).toEqual([...COMMAND_NAMES].sort());
  });

  it.each(COMMAND_NAMES)('%s: the options of its README row are those of its --help', async (name) => {
    const help = await campaignd(...commandWords(name), '--help');
    expect(help.code).toBe(0);
    expect(optionsIn(rows.get(name) ?? '')).toEqual(optionsIn(help.out));
    // It names a README section or a docs/ page, never the design notes a user does not have.
    expect(help.out).not.toMatch(/product\.md|shared\/design/);
  });

  it.each(COMMAND_NAMES)('%s: every option its --help names is one it accepts', async (name) => {
    const help = await campaignd(...commandWords(name), '--help');
    for (const option of optionsIn(help.out)) {
      // With --help first, the command prints its help once the arguments parse.
      const asFlag = await campaignd(...commandWords(name), '--help', option);
      const withValue = await campaignd(...commandWords(name), '--help', `${option}=x`);
      expect([asFlag.code, withValue.code], `${name} ${option}: ${asFlag.err}${withValue.err}`).toContain(0);
    }
  });

  it.each(COMMAND_NAMES)("%s: a mistyped option is campaignd's one line with the usage, exit 2", async (name) => {
    const r = await campaignd(...commandWords(name), '--jsno');
    expect(r.code).toBe(2);
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^campaignd ${name}: unknown option --jsno(?: \\(did you mean --json\\?\\))?; usage: campaignd ${commandWords(name).join(' ')}`));
    expect(r.out).toBe('');
  });

  it('every command that prints a result takes --json; the others say why not in the README', async () => {
    const withJson = [];
    for (const name of COMMAND_NAMES) if (optionsIn((await campaignd(...commandWords(name), '--help')).out).includes('--json')) withJson.push(name);
    // run, simulator and demo print logs and live screens, results writes CSV or JSON lines (--format jsonl).
    expect(withJson.sort()).toEqual(['api-key', 'campaign', 'explain', 'forget', 'leads', 'status', 'store', 'suppress', 'validate']);
  });

  it('a missing value and an unexpected argument are said the same way', async () => {
    expect(await campaignd('status', '--config')).toEqual({
      code: 2,
      out: '',
      err: 'campaignd status: --config needs a value; usage: campaignd status [CAMPAIGN] [--config FILE] [--json] [--watch]\n',
    });
    expect((await campaignd('validate', 'extra')).err).toBe(
      'campaignd validate: unexpected argument "extra": this command takes options only; usage: campaignd validate [--config FILE] [--online] [--preview] [--json]\n',
    );
    expect((await campaignd('campaign', 'pause', 'demo', '--json=yes')).err).toMatch(/^campaignd campaign: --json takes no value; usage: campaignd campaign start\|stop\|pause\|resume NAME/);
  });
});

/** A config folder with campaign "spring" (leads.csv) and `extra` appended to the daemon file. */
function writeConfig(extra = ''): string {
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'leads.csv'), 'phone_number\n+12025550101\n');
  fs.writeFileSync(
    path.join(dir, 'campaigns/spring.yaml'),
    'assistant_id: 1\nallowed_days: [monday, tuesday, wednesday, thursday, friday, saturday, sunday]\nallowed_hours_start_time: "00:00"\nallowed_hours_end_time: "00:00"\ntimezone: UTC\nleads: { file: ../leads.csv }\n',
  );
  const config = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(config, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ./campaignd.db\ncampaigns_dir: ./campaigns\n${extra}`);
  return config;
}

describe('campaign start|stop|pause|resume', () => {
  it('--json prints the change as one document', async () => {
    const config = writeConfig();
    const r = await campaignd('campaign', 'pause', 'spring', '--json', '--config', config);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(r.out)).toEqual({ campaign: 'spring', from: 'running', to: 'paused', changed: true });
  });

  it('a campaign already in the state asked for is left alone, said so, exit 0', async () => {
    const config = writeConfig();
    expect(await campaignd('campaign', 'resume', 'spring', '--config', config)).toEqual({ code: 0, out: 'campaign "spring" is already running: nothing to do\n', err: '' });
    await campaignd('campaign', 'pause', 'spring', '--config', config);
    expect((await campaignd('campaign', 'pause', 'spring', '--config', config)).out).toBe('campaign "spring" is already paused: nothing to do\n');
    expect(JSON.parse((await campaignd('campaign', 'pause', 'spring', '--json', '--config', config)).out)).toEqual({ campaign: 'spring', from: 'paused', to: 'paused', changed: false });
    await campaignd('campaign', 'stop', 'spring', '--config', config);
    expect((await campaignd('campaign', 'stop', 'spring', '--config', config)).out).toBe('campaign "spring" is already stopped: nothing to do\n');
    expect((await campaignd('campaign', 'start', 'spring', '--config', config)).out).toBe('campaign "spring": stopped → running\n');
  });
});

describe('a daemon file that `run` refuses', () => {
  // max_calls_in_parallel: 0 is out of range: `run` refuses to start with it.
  const refused = 'max_calls_in_parallel: 0\n';

  it('run refuses it', async () => {
    const r = await campaignd('run', '--config', writeConfig(refused));
    expect(r.code).toBe(2);
    expect(r.err).toContain('max_calls_in_parallel');
  });

  it('the other commands go on, each saying so as a warning', async () => {
    const config = writeConfig(refused);
    const warning = /^warning: campaignd\.yaml:5:\d+ max_calls_in_parallel: 0 is out of range — use a whole number from 1 to 100000 \("campaignd run" refuses to start until this is fixed\)$/;
    for (const argv of [
      ['leads', 'import', 'leads.csv', '--campaign', 'spring'],
      ['campaign', 'pause', 'spring'],
      ['suppress', 'add', '+12025550102'],
      ['status'],
      ['explain', '+12025550101'],
      ['results'],
      ['forget', '+12025550102'],
    ]) {
      const r = await campaignd(...argv, '--config', config);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).not.toBe(2);
      // The warning once, first; `results` then says what it wrote.
      const lines = r.err.split('\n').filter((l) => l !== '');
      expect(lines[0], argv.join(' ')).toMatch(warning);
      expect(lines.slice(1).filter((l) => l.includes('warning')), argv.join(' ')).toEqual([]);
    }
  });

  it('an error in the database fields is refused: the store it names is not the daemon’s', async () => {
    const config = writeConfig('');
    fs.writeFileSync(config, fs.readFileSync(config, 'utf8').replace('database: ./campaignd.db', 'database: postgres://u:secret@127.0.0.1:9/x'));
    for (const argv of [['status'], ['campaign', 'pause', 'spring']]) {
      const r = await campaignd(...argv, '--config', config);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^campaignd (status|campaign): campaignd\.yaml:\d+:\d+ database: the URL holds a password/);
      expect(r.err).not.toContain('secret');
    }
  });

  it('a dashboard `run` would refuse to expose (its token variable unset) is warned about by every command, the variable named, no value', async () => {
    const config = writeConfig('http:\n  listen: 127.0.0.1:0\n  dashboard_token_env: CAMPAIGND_TEST_UNSET_TOKEN\n');
    for (const argv of [['status'], ['campaign', 'pause', 'spring'], ['explain', '+12025550101']]) {
      const r = await campaignd(...argv, '--config', config);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).not.toBe(2);
      expect(r.err, argv.join(' ')).toMatch(/^warning: campaignd\.yaml:\d+:\d+ http\.dashboard_token_env: names CAMPAIGND_TEST_UNSET_TOKEN, but that environment variable is empty or not set/);
    }
  });

  it('files that `run` needs (the suppression file) are warned about by the commands that read the whole config', async () => {
    const config = writeConfig('suppression_file: ./missing.txt\n');
    const r = await campaignd('campaign', 'pause', 'spring', '--config', config);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: campaignd\.yaml:5:\d+ suppression_file: file .*missing\.txt cannot be read: no such file or folder/);
  });
});

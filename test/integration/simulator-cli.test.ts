import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simulatorCommand } from '../../src/cli/simulator.js';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/main.js';
import { waitUntil } from '../helpers/wait.js';
import { api } from './simulator-fixture.js';

function captureIo(): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env: {}, cwd: process.cwd() }, out: () => out, err: () => err };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

describe('campaignd simulator (command)', () => {
  it('starts with the given tokens, prints the URL and tokens, serves both users, stops on abort', async () => {
    const { io, out } = captureIo();
    const stop = new AbortController();
    const done = simulatorCommand(['--port', '0', '--token', 'a', '--token', 'b', '--time-scale', '60', '--seed', '1', '--call-id', '--log-level', 'silent'], io, stop.signal);
    await until(() => out().includes('token 1: b'));
    const url = /listening on (http:\/\/\S+)/.exec(out())?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(out()).toContain('token 0: a');
    const a = api(url!, 'a');
    const b = api(url!, 'b');
    const aId = (await a.get('/api/user/assistants/outbound')).body[0].id;
    const res = await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: aId });
    expect(res.body.call_id).toBeTypeOf('number');
    expect((await b.get('/api/user/calls')).body.total).toBe(0);
    stop.abort();
    expect(await done).toBe(0);
    await expect(a.get('/api/user/calls')).rejects.toThrow();
  });

  it('prints help and refuses bad flags with the usage exit code', async () => {
    const help = captureIo();
    expect(await main(['simulator', '--help'], help.io)).toBe(0);
    expect(help.out()).toContain('--time-scale');
    const bad = captureIo();
    expect(await main(['simulator', '--time-scale', '0'], bad.io)).toBe(2);
    expect(bad.err()).toContain('--time-scale');
    const unknown = captureIo();
    expect(await main(['simulator', '--nope'], unknown.io)).toBe(2);
    const scenario = captureIo();
    expect(await main(['simulator', '--conversations', 'chatty'], scenario.io)).toBe(2);
    expect(scenario.err()).toContain('--conversations: unknown scenario "chatty" (use callback-en, callback-de, interested, not-interested, wrong-number or mix)');
    const mix = captureIo();
    expect(await main(['simulator', '--conversation-mix', 'interested=1,chatty=2'], mix.io)).toBe(2);
    expect(mix.err()).toContain('--conversation-mix: unknown conversation scenario "chatty"');
  });

  it('--conversations mix makes the people who answer say something', async () => {
    const { io, out } = captureIo();
    const stop = new AbortController();
    const done = simulatorCommand(['--port', '0', '--token', 'a', '--time-scale', '1000', '--conversations', 'mix', '--conversation-mix', 'wrong-number=1,interested=0', '--outcomes', 'human=1,voicemail=0,busy=0,no-answer=0,failed=0', '--log-level', 'silent'], io, stop.signal);
    await until(() => out().includes('token 0: a'));
    const url = /listening on (http:\/\/\S+)/.exec(out())![1]!;
    const a = api(url, 'a');
    const aId = (await a.get('/api/user/assistants/outbound')).body[0].id;
    await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: aId });
    let rows: { scenario: string | null; extracted_variables: Record<string, unknown> }[] = [];
    await waitUntil(async () => {
      rows = (await api(url, null).get('/__sim/conversations')).body.calls;
      return rows[0]?.scenario != null;
    }, { message: 'the call to end with its conversation' });
    expect(rows[0]).toMatchObject({ scenario: 'wrong-number', extracted_variables: { outcome: 'wrong number' } });
    stop.abort();
    expect(await done).toBe(0);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// A stop signal reaches campaignd only when nothing sits between it and the supervisor:
// npx and `sh -c` do not pass SIGTERM on (the daemon would keep dialing without a parent).
// The systemd unit, the container image and the compose files start the bin itself.

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8');

describe('deploy/ starts the bin directly', () => {
  it('systemd: ExecStart is the bin, no npx, no shell', () => {
    const exec = read('deploy/campaignd.service').split('\n').filter((l) => l.startsWith('ExecStart='));
    expect(exec).toHaveLength(1);
    expect(exec[0]).toMatch(/^ExecStart=\/\S+\/bin\/campaignd\.js run\b/);
  });

  it('container: ENTRYPOINT is the bin in exec form', () => {
    const entry = read('deploy/Dockerfile').split('\n').filter((l) => l.startsWith('ENTRYPOINT'));
    expect(entry).toEqual(['ENTRYPOINT ["/app/bin/campaignd.js"]']);
  });

  it('compose: campaignd services take the image entrypoint; none goes through npx or a shell', () => {
    for (const file of ['deploy/compose.yaml', 'deploy/compose-ha.yaml']) {
      const text = read(file);
      expect(text, file).not.toMatch(/\bnpx\b|npm exec|sh -c/);
      const services = (parse(text, { merge: true }) as { services: Record<string, { command?: string[] }> }).services;
      for (const [name, s] of Object.entries(services)) {
        if (s.command?.[0] === 'run') expect(s.command, `${file}: ${name}`).toEqual(['run']);
      }
    }
  });
});

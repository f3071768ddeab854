import type { Logger } from '../log/logger.js';

// The elector decides the role at any moment; taking a role up or giving it back takes
// time (recovery, draining in-flight requests). Changes run one after the other, and a
// change asked for while another runs is applied after it, only the last one counting:
// active → standby → active in quick succession ends active, never half of both.

export type Role = 'active' | 'standby';

export interface RoleSwitch {
  set(role: Role): void;
  /** Resolves once every asked change has been applied. */
  settled(): Promise<void>;
}

export function createRoleSwitch(opts: { logger: Logger; becomeActive(): Promise<void>; becomeStandby(): Promise<void> }): RoleSwitch {
  let current: Role = 'standby';
  let wanted: Role = 'standby';
  let running: Promise<void> = Promise.resolve();

  async function apply(): Promise<void> {
    while (current !== wanted) {
      const next = wanted;
      try {
        await (next === 'active' ? opts.becomeActive() : opts.becomeStandby());
        opts.logger.info({ role: next }, next === 'active' ? 'this instance is active: claiming and dialing' : 'this instance stands by: recording webhooks only');
      } catch (err) {
        // A half-made change is finished by the next one the elector asks for; standing by is always safe.
        opts.logger.error({ err: err instanceof Error ? err.message : String(err), role: next }, 'role change failed');
        if (next === 'active') wanted = 'standby';
      }
      current = next;
    }
  }

  return {
    set(role) {
      wanted = role;
      running = running.then(apply);
    },
    settled: () => running,
  };
}

// `max_attempts_per_number` (docs/design.md §11) is written the same way in the daemon
// file, a campaign file and a calling_rules file: one definition, three descriptions.
import type { Field } from './spec.js';

/** The field `{count, window_hours}`, described for the file that holds it. */
export function attemptCapField(description: string): Field {
  return {
    spec: {
      kind: 'object',
      fields: {
        count: { spec: { kind: 'integer', min: 1, max: 1000 }, required: true, description: 'Attempts allowed in the window.', example: 3 },
        window_hours: { spec: { kind: 'integer', min: 1, max: 8760 }, required: true, description: 'Length of the rolling window in hours.', example: 24 },
      },
    },
    description,
    example: { count: 3, window_hours: 24 },
  };
}

// Rules on the result (README, "On the result"), as the engine sees them once the campaign
// file was checked: conditions normalised, durations in seconds.

/** What a matching rule does to the lead. */
export type ResultAction =
  | { kind: 'complete' }
  | { kind: 'suppress' }
  | { kind: 'invalid' }
  | { kind: 'retry-in'; seconds: number }
  | { kind: 'move-to'; campaign: string };

/** One `{when, then}` of `on_result`; every condition given must hold. */
export interface ResultRule {
  /** 1-based position in `on_result`, named by explain. */
  position: number;
  /** Final call statuses, lower case. */
  status?: string[];
  /** answered_by values, lower case. */
  answeredBy?: string[];
  /** An extracted variable and how it is compared (values trimmed, case-insensitive). */
  variable?: { name: string; equals?: string; in?: string[]; matches?: string };
  then: ResultAction;
}

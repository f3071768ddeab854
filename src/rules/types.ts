// Who may be called, when (docs/design.md §11): the normalised shapes that travel in a
// campaign's stored config (config_json), so that the engine, `explain` and
// `validate --preview` judge a number by the same rules, with the daemon up or down.

/** At most `count` attempts to one number in any rolling `windowHours` (every campaign's attempts count). */
export interface AttemptCap {
  count: number;
  windowHours: number;
  /** Where the cap comes from, for explain: "campaign", "daemon", or "rules US-FL (file)". */
  origin: string;
}

/** Local hours of one weekday: [start, end) in seconds after local midnight; null = no calls that day. */
export type DayHours = { start: number; end: number } | null;

/** The rule of one region, as read from a calling_rules file. */
export interface RegionRule {
  /** ISO 3166-1 country (`US`) or ISO 3166-2 subdivision (`US-FL`, `CA-ON`). */
  region: string;
  /** Local hours per weekday, index 0 = Monday … 6 = Sunday; absent = no hour limit. */
  hours?: DayHours[];
  /** No calls on the region's public holidays (the date-holidays calendar). */
  holidays: boolean;
  /** Whole local dates without calls, `YYYY-MM-DD`. */
  closedDates: string[];
  maxAttemptsPerNumber?: { count: number; windowHours: number };
  /** The rule's own `source:` (a statute, a page), shown by explain. */
  source?: string;
  /** The rules file it came from (absolute path). */
  file: string;
}

/** What a campaign applies on top of its own window: rules of the daemon's and its own files. */
export interface CallingPolicy {
  rules: RegionRule[];
  caps: AttemptCap[];
}

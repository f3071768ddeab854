import { z } from 'zod';

/**
 * Building blocks for parsing what the live service sends. The spec states one shape;
 * deployments in the wild send others (listed in docs/simulator.md; docs/design.md §5), so each
 * block accepts every known variant and yields the single shape the rest of campaignd uses.
 */

/** An id sent as a number or as a numeric string; yields a number. */
export const liberalId = z
  .union([z.number().int().nonnegative(), z.string().regex(/^\s*\d+\s*$/)])
  .transform((v) => (typeof v === 'number' ? v : Number(v.trim())));


/** A number sent as a number or a numeric string (costs, sensitivities); yields a number. */
export const liberalNumber = z
  .union([z.number(), z.string().regex(/^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/)])
  .transform((v) => (typeof v === 'number' ? v : Number(v)));

/** A boolean sent as true/false, 1/0 or "1"/"0"/"true"/"false"; yields a boolean. */
export const liberalBoolean = z
  .union([z.boolean(), z.literal(0), z.literal(1), z.enum(['0', '1', 'true', 'false'])])
  .transform((v) => v === true || v === 1 || v === '1' || v === 'true');

/**
 * A key/value object that PHP backends send as `[]` when empty (and occasionally as a
 * list); null and absent become `{}`. Yields a plain object.
 */
export const liberalObject = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .nullish()
  .transform((v): Record<string, unknown> => {
    if (v == null) return {};
    if (Array.isArray(v)) return Object.fromEntries(v.map((item, i) => [String(i), item]));
    return v;
  });

/** One line of a transcript sent as an array. */
export const transcriptLine = z.looseObject({
  text: z.string().nullish(),
  type: z.string().nullish(),
  sender: z.string().nullish(),
  timestamp: z.union([z.string(), z.number()]).nullish(),
});

/** Joins transcript lines as `sender: text`, one a line. */
function joinTranscript(lines: readonly z.infer<typeof transcriptLine>[]): string {
  return lines
    .map((l) => {
      const text = l.text ?? '';
      const who = l.sender ?? l.type;
      return who ? `${who}: ${text}` : text;
    })
    .join('\n');
}

/** A transcript sent as a string or an array of `{text, type, sender, timestamp}`; yields a string. */
export const liberalTranscript = z
  .union([z.string(), z.array(transcriptLine)])
  .nullish()
  .transform((v) => (v == null ? '' : typeof v === 'string' ? v : joinTranscript(v)));

/** A list that may be absent or null; yields an array. */
export function liberalArray<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .nullish()
    .transform((v): z.output<T>[] => (v == null ? [] : v));
}

/** A string that may be absent or null (timestamps, URLs); yields string | null. */
export const nullableString = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

/** A possibly absent/null number or numeric string; yields number | null. */
export const nullableNumber = liberalNumber
  .nullish()
  .transform((v) => v ?? null);

/** A possibly absent/null id; yields number | null. */
export const optionalId = liberalId
  .nullish()
  .transform((v) => v ?? null);

/** A possibly absent/null boolean; yields boolean | null. */
export const nullableBoolean = liberalBoolean
  .nullish()
  .transform((v) => v ?? null);

// "Did you mean …" for typos in keys and enumerated values. Optimal-string-alignment distance,
// so that a swapped pair of letters ("mnoday") counts as one edit, as people make them.

/** Edit distance between two strings (insert, delete, substitute, swap neighbours). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * cols + j] = best;
    }
  }
  return at(rows - 1, cols - 1);
}

/** The closest candidate to `input`, when it is close enough to be a plausible typo. */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const typed = input.toLowerCase().replace(/-/g, '_');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const wanted = candidate.toLowerCase().replace(/-/g, '_');
    let distance = editDistance(typed, wanted);
    // A truncated name ("allowed_hours_start") is as plausible as a typo.
    if (typed.length >= 3 && (wanted.startsWith(typed) || typed.startsWith(wanted))) distance = Math.min(distance, 1);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  const allowed = Math.max(2, Math.floor(typed.length * 0.4));
  return bestDistance <= allowed ? best : undefined;
}

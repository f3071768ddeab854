// The batches of an import that are being written while the next one is read (import.ts).
// A failed write is reported at the next room() or drain(), never lost and never counted
// as an unhandled rejection in between.

/** At most `limit` writes in flight. */
export class WriteWindow {
  private readonly running = new Set<Promise<void>>();
  private failure: { err: unknown } | null = null;

  constructor(private readonly limit: number) {}

  add(write: Promise<void>): void {
    const tracked = write.then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= { err };
      },
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** Waits until another write may start; throws the first failure so far. */
  async room(): Promise<void> {
    while (this.running.size >= this.limit && !this.failure) await Promise.race(this.running);
    this.throwFailure();
  }

  /** Waits for every write; throws the first failure. */
  async drain(): Promise<void> {
    await this.settled();
    this.throwFailure();
  }

  /** Waits for every write, whatever became of them. */
  async settled(): Promise<void> {
    await Promise.all([...this.running]);
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.err;
  }
}

/** One batch's turn: `previous` settles when every batch before it has ended its turn. */
export interface Turn {
  previous: Promise<void>;
  /** Ends this turn (again is harmless). */
  done(): void;
}

/** Hands out turns in order, so that batches written side by side take their lead ids in file order. */
export class Turns {
  private last: Promise<void> = Promise.resolve();

  next(): Turn {
    const previous = this.last;
    let done!: () => void;
    const own = new Promise<void>((resolve) => (done = resolve));
    // A turn ended early (a batch that failed before taking ids) still waits for the ones before it.
    this.last = Promise.all([previous, own]).then(() => undefined);
    return { previous, done };
  }
}

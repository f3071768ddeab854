import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './types.js';

// Multi-row inserts for bulk loads. Building a 1,000-row insert through kysely's query
// builder costs about as much as SQLite takes to store the rows, so the statement is
// compiled once per shape (table, columns, row count, returning) by kysely itself —
// still dialect-correct SQL, no hand-written SQLite — and then executed with fresh
// parameters. Parameters of a multi-row VALUES list are row-major in column order.

/** Compiled insert statements by shape; make one per bulk job. */
export class BulkInserter<T extends keyof Database & string> {
  private readonly templates = new Map<string, CompiledQuery>();

  constructor(
    private readonly table: T,
    private readonly columns: readonly (keyof Database[T] & string)[],
    private readonly returning: readonly (keyof Database[T] & string)[] = [],
  ) {}

  /**
   * Inserts any number of rows given as one flat, row-major array of values (no array
   * per row: at a million rows the garbage counts). Returns the `returning` columns in
   * row order. Rows go in statements of `chunk` rows and the remainder in power-of-two
   * pieces, so that only a dozen statement shapes are ever compiled.
   */
  async insertAll<R = Record<string, unknown>>(db: Kysely<Database>, values: unknown[], chunk = 1024): Promise<R[]> {
    const width = this.columns.length;
    if (values.length % width !== 0) throw new Error(`bulk insert into ${this.table}: ${values.length} values is not a whole number of ${width}-column rows`);
    const rows = values.length / width;
    const out: R[] = [];
    let i = 0;
    while (i < rows) {
      const left = rows - i;
      const size = left >= chunk ? chunk : 2 ** Math.floor(Math.log2(left));
      const parameters = i === 0 && size === rows ? values : values.slice(i * width, (i + size) * width);
      const result = await db.executeQuery<R>(CompiledQuery.raw(this.template(db, size).sql, parameters));
      for (const r of result.rows) out.push(r);
      i += size;
    }
    return out;
  }

  private template(db: Kysely<Database>, count: number): CompiledQuery {
    let template = this.templates.get(String(count));
    if (!template) {
      const placeholder = Object.fromEntries(this.columns.map((c) => [c, null]));
      const values = Array.from({ length: count }, () => placeholder);
      const base = (db as unknown as Kysely<Record<string, Record<string, unknown>>>).insertInto(this.table).values(values);
      template = this.returning.length > 0 ? base.returning([...this.returning]).compile() : base.compile();
      if (template.parameters.length !== count * this.columns.length) {
        throw new Error(`bulk insert into ${this.table}: unexpected statement shape`);
      }
      this.templates.set(String(count), template);
    }
    return template;
  }
}

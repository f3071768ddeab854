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
   * Inserts any number of rows (values in `columns` order); returns the `returning`
   * columns in row order. Rows go in statements of `chunk` rows, and the remainder in
   * power-of-two pieces, so that only a dozen statement shapes are ever compiled.
   */
  async insertAll<R = Record<string, unknown>>(db: Kysely<Database>, rows: readonly (readonly unknown[])[], chunk = 1024): Promise<R[]> {
    const out: R[] = [];
    let i = 0;
    while (i < rows.length) {
      const left = rows.length - i;
      const size = left >= chunk ? chunk : 2 ** Math.floor(Math.log2(left));
      const got = await this.insert<R>(db, rows.slice(i, i + size));
      for (const r of got) out.push(r);
      i += size;
    }
    return out;
  }

  /** Inserts `rows` (values in `columns` order) with one statement; returns the `returning` columns. */
  async insert<R = Record<string, unknown>>(db: Kysely<Database>, rows: readonly (readonly unknown[])[]): Promise<R[]> {
    if (rows.length === 0) return [];
    const parameters: unknown[] = [];
    for (const row of rows) {
      if (row.length !== this.columns.length) throw new Error(`bulk insert into ${this.table}: ${row.length} values for ${this.columns.length} columns`);
      for (const value of row) parameters.push(value);
    }
    const template = this.template(db, rows.length);
    const result = await db.executeQuery<R>(CompiledQuery.raw(template.sql, parameters));
    return result.rows;
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

import { CompiledQuery, sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// Multi-row inserts for bulk loads. Building a 1,000-row insert through kysely's query
// builder costs about as much as SQLite takes to store the rows, so the statement is
// compiled once per shape (table, columns, row count, returning) by kysely itself —
// still dialect-correct SQL, no hand-written SQLite — and then executed with fresh
// parameters. Parameters of a multi-row VALUES list are row-major in column order.
//
// PostgreSQL parses and plans a statement of 12,000 parameters afresh each time (pg sends
// it unnamed), which halved the import's rate there. It gets one array per column
// instead: `INSERT … SELECT FROM unnest($1::bigint[], $2::text[], …)`, a statement of as
// many parameters as the table has columns, whatever the number of rows. The lead import
// itself goes by COPY there (lead-copy.ts); this stays for a handle without a raw client
// (a transaction handed in).

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
    if (isPostgres(db)) return this.insertByColumns<R>(db, values, rows);
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

  private unnestSql: string | undefined;

  /** PostgreSQL: every row in one statement, each column's values as one array parameter. */
  private async insertByColumns<R>(db: Kysely<Database>, values: unknown[], rows: number): Promise<R[]> {
    if (rows === 0) return [];
    const width = this.columns.length;
    const arrays: unknown[][] = this.columns.map(() => new Array(rows));
    for (let r = 0, i = 0; r < rows; r++) for (let c = 0; c < width; c++, i++) arrays[c]![r] = values[i];
    this.unnestSql ??= await this.unnestStatement(db);
    const result = await db.executeQuery<R>(CompiledQuery.raw(this.unnestSql, arrays));
    return result.rows;
  }

  private async unnestStatement(db: Kysely<Database>): Promise<string> {
    // The columns' own types, so that each array parameter is read as the column reads it.
    const types = await sql<{ name: string; type: string }>`
      select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = ${this.table}::regclass and attnum > 0 and not attisdropped`.execute(db);
    const typeOf = new Map(types.rows.map((t) => [t.name, t.type]));
    const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
    const params = this.columns.map((c, i) => {
      const type = typeOf.get(c);
      if (!type) throw new Error(`bulk insert into ${this.table}: no column ${c}`);
      return `$${i + 1}::${type}[]`;
    });
    // WITH ORDINALITY … ORDER BY: rows go in, and RETURNING comes back, in the given order.
    const names = this.columns.map(quote).join(', ');
    const aliases = this.columns.map((_, i) => `c${i}`);
    const returning = this.returning.length > 0 ? ` returning ${this.returning.map(quote).join(', ')}` : '';
    return `insert into ${quote(this.table)} (${names}) select ${aliases.join(', ')} from unnest(${params.join(', ')}) with ordinality as u(${aliases.join(', ')}, n) order by n${returning}`;
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

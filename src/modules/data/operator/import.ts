/**
 * Import of JSON (an array), NDJSON (one object per line) or CSV (a header row) into a
 * collection, with a result per failed row. Rows are inserted 100 at a time through the
 * public API's bulk service (one all-or-nothing statement); when a batch is refused, its rows
 * are inserted one by one, so each bad row gets its own message and the good ones go in.
 * CSV cells are strings: they are converted to the declared field types first.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import type { AppContext } from '../../../context.js';
import type { FieldDef } from '../../../db/types.js';
import { AppError } from '../../../lib/errors.js';
import { isPlainObject } from '../../../lib/objects.js';
import { DataErrors } from '../errors.js';
import { createDocument, createMany } from '../write-service.js';
import type { OperatorTarget } from './target.js';

export type ImportFormat = 'json' | 'ndjson' | 'csv';

export const IMPORT_MAX_ROWS = 50_000;
const BATCH = 100;
const MAX_REPORTED = 200;

interface Row {
  /** 1-based position of the record in the file (data rows; a CSV header is not counted). */
  row: number;
  value?: unknown;
  error?: string;
}

export interface ImportResult {
  total: number;
  inserted: number;
  failed: number;
  errors: Array<{ row: number; message: string }>;
}

function fromJson(body: unknown): Row[] {
  if (!Array.isArray(body)) throw DataErrors.invalid_body('A JSON import must be an array of objects.');
  return body.map((value, i) => ({ row: i + 1, value }));
}

function fromNdjson(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const row = rows.length + 1;
    try {
      rows.push({ row, value: JSON.parse(line) });
    } catch {
      rows.push({ row, error: 'Invalid JSON on this line.' });
    }
  }
  return rows;
}

/** A CSV cell as the declared type wants it; undeclared columns stay strings. */
function cellValue(def: FieldDef | undefined, cell: string): unknown {
  if (!def || def.type === 'String' || def.type === 'Ref' || def.type === 'Date') return cell;
  if (def.type === 'Number') return cell.trim() === '' ? cell : Number(cell);
  if (def.type === 'Boolean') return /^(true|1|yes)$/i.test(cell) ? true : /^(false|0|no)$/i.test(cell) ? false : cell;
  try {
    return JSON.parse(cell);
  } catch {
    return cell;
  }
}

function fromCsv(text: string, fields: Map<string, FieldDef>): Row[] {
  let records: Record<string, string>[];
  try {
    records = parseCsv(text, { columns: true, skip_empty_lines: true, bom: true, trim: false, relax_column_count: false });
  } catch (err) {
    throw DataErrors.invalid_body(`Invalid CSV: ${(err as Error).message}`);
  }
  return records.map((rec, i) => {
    const doc: Record<string, unknown> = {};
    for (const [key, cell] of Object.entries(rec)) {
      if (cell === '') continue; // an empty cell is an absent value (required fields then say so)
      doc[key] = cellValue(fields.get(key), cell);
    }
    return { row: i + 1, value: doc };
  });
}

export function parseImport(format: ImportFormat, body: unknown, fields: Map<string, FieldDef>): Row[] {
  if (format === 'json') return fromJson(body);
  if (typeof body !== 'string') throw DataErrors.invalid_body(`Send the ${format.toUpperCase()} file as the request body.`);
  return format === 'csv' ? fromCsv(body, fields) : fromNdjson(body);
}

/** Inserts what parsed, batch by batch; per-row errors for the rest. */
export async function importRows(ctx: AppContext, t: OperatorTarget, rows: Row[]): Promise<ImportResult> {
  if (rows.length > IMPORT_MAX_ROWS) throw DataErrors.invalid_body(`At most ${IMPORT_MAX_ROWS} rows per import.`);
  const errors: ImportResult['errors'] = [];
  let inserted = 0;
  const fail = (row: number, message: string) => errors.push({ row, message });
  const good: Row[] = [];
  for (const r of rows) {
    if (r.error !== undefined) fail(r.row, r.error);
    else if (!isPlainObject(r.value)) fail(r.row, 'Each record must be a JSON object.');
    else good.push(r);
  }
  for (let i = 0; i < good.length; i += BATCH) {
    const batch = good.slice(i, i + BATCH);
    try {
      inserted += (await createMany(ctx, t.col, t.access, batch.map((r) => r.value), t.databaseBytes)).insertedCount;
      continue;
    } catch (err) {
      if (!isClientError(err)) throw err;
    }
    for (const r of batch) {
      try {
        await createDocument(ctx, t.col, t.access, r.value, t.databaseBytes);
        inserted++;
      } catch (err) {
        if (!isClientError(err)) throw err;
        fail(r.row, err.message);
      }
    }
  }
  errors.sort((a, b) => a.row - b.row);
  return { total: rows.length, inserted, failed: errors.length, errors: errors.slice(0, MAX_REPORTED) };
}

function isClientError(err: unknown): err is AppError {
  return err instanceof AppError && err.status < 500;
}

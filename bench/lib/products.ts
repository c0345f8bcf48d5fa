/**
 * The benchmarks' `products` collection: name, price, category, stock, with `n` documents
 * written straight into its partition (one INSERT … SELECT, seconds for 100 000) and ids that
 * the load can pick from. Prices spread over 0–9 999, categories c0–c9.
 */
import { sql } from 'kysely';
import type { AppContext } from '../../src/context.js';
import { createCollection } from '../../src/modules/collections/service.js';

export interface SeedProducts {
  docs: number;
  /** Compound indexes to declare (bench/data.ts compares with and without). */
  indexes?: Array<{ fields: string[] }>;
  /** Ids are `idBase + 1 … idBase + docs` in hex: distinct per project when several share a database. */
  idBase?: number;
}

/** Creates the collection in a project on the `pro` plan and fills it; its id and the documents' ids. */
export async function seedProducts(ctx: AppContext, projectId: string, opts: SeedProducts): Promise<{ collectionId: string; ids: string[] }> {
  const base = opts.idBase ?? 0;
  const col = await createCollection(ctx, projectId, 'pro', {
    name: 'products',
    fields: [
      { key: 'name', type: 'String', required: true },
      { key: 'price', type: 'Number' },
      { key: 'category', type: 'String' },
      { key: 'stock', type: 'Number' },
    ],
    indexes: opts.indexes ?? [],
  });
  await sql`
    INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at)
    SELECT ${projectId}, ${col.id}, lpad(to_hex(${base} + g), 24, '0'), NULL, d, octet_length(d::text), now() - g * interval '1 second', now()
    FROM generate_series(1, ${opts.docs}) g,
         LATERAL (SELECT jsonb_build_object('name', 'item ' || g, 'price', (g * 37) % 10000, 'category', 'c' || (g % 10), 'stock', 7) AS d) x`
    .execute(ctx.db.admin);
  return { collectionId: col.id, ids: Array.from({ length: opts.docs }, (_, g) => (base + g + 1).toString(16).padStart(24, '0')) };
}

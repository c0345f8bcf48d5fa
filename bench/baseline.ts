/**
 * The comparison server for bench/data.ts: bare Fastify + `pg`, hand-written SQL on the same
 * documents table (owner connection, no RLS, no transaction, no validation). It answers the
 * same four operations with the same response shapes, so the ratio shows what Plinth's
 * safety (tenant transaction, policies, validation, quota) costs. Its list reads fields
 * through the same accessor expressions as Plinth, so it uses the same indexes (with
 * `data->>'category'` it would scan the collection and flatter Plinth's ratio).
 */
import Fastify from 'fastify';
import pg from 'pg';
import { objectId } from '../src/lib/ids.js';

export interface Baseline {
  url: string;
  close(): Promise<void>;
}

const COLS = 'id, data, created_at, updated_at, deleted_at';
const view = (r: { id: string; data: object; created_at: Date; updated_at: Date; deleted_at: Date | null }) => ({
  _id: r.id,
  ...r.data,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  isDeleted: r.deleted_at !== null,
  deletedAt: r.deleted_at,
});

export async function startBaseline(databaseUrl: string, projectId: string, collectionId: string): Promise<Baseline> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const app = Fastify({ logger: false });
  const scope = [projectId, collectionId];

  app.get('/list', async (req) => {
    const q = req.query as { category: string; price_gte: string; price_lt: string };
    const where = `project_id = $1 AND collection_id = $2 AND deleted_at IS NULL AND plinth_txt(data, 'category') = $3
      AND plinth_num(data, 'price') >= $4 AND plinth_num(data, 'price') < $5`;
    const args = [...scope, q.category, Number(q.price_gte), Number(q.price_lt)];
    const rows = await pool.query(`SELECT ${COLS} FROM documents WHERE ${where} ORDER BY plinth_num(data, 'price') DESC, id DESC LIMIT 20`, args);
    const total = await pool.query(`SELECT count(*)::int AS n FROM documents WHERE ${where}`, args);
    return { success: true, data: { items: rows.rows.map(view), total: total.rows[0].n, page: 1, limit: 20 }, message: '' };
  });

  app.get('/doc/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const r = await pool.query(`SELECT ${COLS} FROM documents WHERE project_id = $1 AND collection_id = $2 AND id = $3 AND deleted_at IS NULL`, [...scope, id]);
    if (!r.rows[0]) return reply.status(404).send({ success: false });
    return { success: true, data: view(r.rows[0]), message: '' };
  });

  app.post('/doc', async (req, reply) => {
    const body = JSON.stringify(req.body);
    const r = await pool.query(
      `INSERT INTO documents (project_id, collection_id, id, data, size_bytes) VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING ${COLS}`,
      [...scope, objectId(), body, Buffer.byteLength(body)],
    );
    return reply.status(201).send(view(r.rows[0]));
  });

  app.patch('/doc/:id', async (req) => {
    const { id } = req.params as { id: string };
    const r = await pool.query(
      `UPDATE documents SET data = data || $4::jsonb, updated_at = now() WHERE project_id = $1 AND collection_id = $2 AND id = $3 RETURNING ${COLS}`,
      [...scope, id, JSON.stringify(req.body)],
    );
    return { success: true, data: view(r.rows[0]), message: 'Updated' };
  });

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}

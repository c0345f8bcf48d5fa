/**
 * The limit: a hand-written Fastify + pg server doing only what each workload needs (no
 * authentication, no validation, no tenant scope), on a table with a JSONB document column and
 * the one index the list needs, `(owner, created_at)`, plus planner statistics on `n` (without
 * them PostgreSQL guesses the range's selectivity and sorts all of an owner's rows). Pool of 10,
 * pg's default (and Parse Server's). Started by bench/peers.ts as its own process:
 * `PG_URL=… PORT=… node --import tsx bench/peers/limit-server.ts`.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.PG_URL, max: 10 });

const DDL = `
CREATE TABLE IF NOT EXISTS docs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  data jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_owner_created ON docs (owner, created_at);
CREATE STATISTICS IF NOT EXISTS docs_n_stats ON ((data->>'n')::float8) FROM docs;
CREATE TABLE IF NOT EXISTS items (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  data jsonb NOT NULL
);`;

interface Row {
  id: string;
  owner: string;
  created_at: Date;
  updated_at: Date;
  data: Record<string, unknown>;
}
interface Doc {
  title: string;
  n: number;
  tags: string[];
  owner: string;
}

const COLS = 'id, owner, created_at, updated_at, data';
const toDoc = (r: Row) => ({ id: r.id, owner: r.owner, createdAt: r.created_at, updatedAt: r.updated_at, ...r.data });
const dataOf = ({ title, n, tags }: Doc) => JSON.stringify({ title, n, tags });

const app = Fastify({ logger: false });

app.post<{ Body: Doc }>('/items', async (req, reply) => {
  const { rows } = await pool.query<Row>('INSERT INTO items (owner, data) VALUES ($1, $2::jsonb) RETURNING id, created_at', [req.body.owner, dataOf(req.body)]);
  return reply.code(201).send({ id: rows[0]!.id, createdAt: rows[0]!.created_at });
});

app.get<{ Querystring: { owner: string; nMin: string; nMax: string; limit: string } }>('/docs', async (req) => {
  const q = req.query;
  const { rows } = await pool.query<Row>(
    `SELECT ${COLS} FROM docs WHERE owner = $1 AND (data->>'n')::float8 >= $2 AND (data->>'n')::float8 < $3 ORDER BY created_at DESC LIMIT $4`,
    [q.owner, Number(q.nMin), Number(q.nMax), Math.min(Number(q.limit) || 20, 1000)],
  );
  return { results: rows.map(toDoc) };
});

app.get<{ Params: { id: string } }>('/docs/:id', async (req, reply) => {
  const { rows } = await pool.query<Row>(`SELECT ${COLS} FROM docs WHERE id = $1`, [req.params.id]);
  if (!rows.length) return reply.code(404).send({ error: 'not found' });
  return toDoc(rows[0]!);
});

app.patch<{ Params: { id: string }; Body: Record<string, unknown> }>('/docs/:id', async (req, reply) => {
  const { rows } = await pool.query<Row>('UPDATE docs SET data = data || $2::jsonb, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at', [
    req.params.id,
    JSON.stringify(req.body),
  ]);
  if (!rows.length) return reply.code(404).send({ error: 'not found' });
  return { updatedAt: rows[0]!.updated_at };
});

// seeding, never measured: one multi-row insert (rows get increasing created_at), then the ids
app.post<{ Body: { docs: Doc[] } }>('/seed', async (req, reply) => {
  await pool.query('TRUNCATE docs, items');
  const rows = req.body.docs.map((d) => ({ owner: d.owner, data: JSON.parse(dataOf(d)) as object }));
  await pool.query('INSERT INTO docs (owner, data) SELECT x.owner, x.data FROM jsonb_to_recordset($1::jsonb) AS x(owner text, data jsonb)', [JSON.stringify(rows)]);
  const ids = await pool.query<{ id: string }>('SELECT id FROM docs ORDER BY created_at');
  return reply.code(201).send({ ids: ids.rows.map((r) => r.id) });
});

await pool.query(DDL);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.send?.('listening');
const stop = () => void app.close().then(() => pool.end()).then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

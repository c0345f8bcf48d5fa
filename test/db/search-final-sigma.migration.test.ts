/**
 * Migration 030 on a database whose searchable collections were indexed with the old fold (ς
 * kept, Σ folded to σ): a search in Greek capitals (`ΚΌΣΜΟΣ`) missed `κόσμος`. After it, the
 * stored vectors holding a final sigma are rebuilt, so old documents are found both ways, and a
 * streaming collection's change trigger announces nothing for the rebuild.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { migrate } from '../../src/db/migrate.js';

const NAME = `mig_sigma_${process.pid}_${Date.now().toString(36)}`;
let client: pg.Client;

const OP = 'a'.repeat(24);
const P = 'b'.repeat(24);
const C = 'c'.repeat(24);
const doc = (n: number) => n.toString(16).padStart(24, '0');
const part = `documents_${C}`;

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
  await migrate(serverUrl(NAME), () => {}, 24);
  client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  await client.query(`INSERT INTO operators (id, email, password_hash) VALUES ('${OP}', 'o@example.com', 'x')`);
  await client.query(`INSERT INTO projects (id, owner_id, name, publishable_key_hash, secret_key_hash, jwt_secret)
    VALUES ('${P}', '${OP}', 'p', 'pk', 'sk', '{}')`);
  await client.query(`INSERT INTO collections (id, project_id, name, fields) VALUES ('${C}', '${P}', 'greek', '[{"key":"title","type":"String","searchable":true}]')`);
  // What search-index-queries.ts builds for a searchable collection, with the fold of migration 021.
  await client.query(`CREATE TABLE ${part} (LIKE documents INCLUDING DEFAULTS)`);
  await client.query(`ALTER TABLE documents ATTACH PARTITION ${part} FOR VALUES IN ('${C}')`);
  await client.query(`CREATE TRIGGER ds_${C} BEFORE INSERT OR UPDATE OF data ON ${part} FOR EACH ROW EXECUTE FUNCTION plinth_search_vector('simple', 'title')`);
  const titles = ['Ένας κόσμος', 'ΝΈΟΣ ΚΌΣΜΟΣ', 'Καλημέρα'];
  for (const [i, title] of titles.entries()) {
    await client.query(`INSERT INTO documents (project_id, collection_id, id, data) VALUES ('${P}', '${C}', $1, $2)`, [doc(i + 1), { title }]);
  }
  // A streaming collection: every change of its documents is recorded (sql/70_change_stream.sql).
  await client.query(`CREATE OR REPLACE FUNCTION plinth_record_change() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO changes (project_id, collection_id, collection, doc_id, action, version, truncated, doc_created_at, doc_updated_at)
      VALUES (NEW.project_id, NEW.collection_id, 'greek', NEW.id, 'update', NEW.version, false, NEW.created_at, NEW.updated_at); RETURN NULL; END $$`);
  await client.query(`CREATE TRIGGER dc_${C} AFTER INSERT OR UPDATE OR DELETE ON ${part} FOR EACH ROW EXECUTE FUNCTION plinth_record_change('greek', '65536')`);
});
afterAll(async () => {
  await client?.end();
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
});

const search = async (word: string) => {
  const r = await client.query<{ title: string }>(
    `SELECT data ->> 'title' AS title FROM documents WHERE search_vector @@ websearch_to_tsquery('simple', plinth_fold($1)) ORDER BY id`, [word]);
  return r.rows.map((x) => x.title);
};

describe('030: Greek final sigma in existing search vectors', () => {
  it('before it, a search in capitals misses the word written with a final sigma', async () => {
    expect(await search('ΚΌΣΜΟΣ')).toEqual(['ΝΈΟΣ ΚΌΣΜΟΣ']);
    expect(await search('κόσμος')).toEqual(['Ένας κόσμος']);
  });

  it('after it, both are found whichever way the word is written, and no change is announced', async () => {
    const changes = async () => Number((await client.query('SELECT count(*) FROM changes')).rows[0].count);
    const before = await changes();
    const untouched = (await client.query(`SELECT xmin::text FROM ${part} WHERE id = '${doc(3)}'`)).rows[0].xmin;
    await migrate(serverUrl(NAME));
    expect(await search('ΚΌΣΜΟΣ')).toEqual(['Ένας κόσμος', 'ΝΈΟΣ ΚΌΣΜΟΣ']);
    expect(await search('κόσμος')).toEqual(['Ένας κόσμος', 'ΝΈΟΣ ΚΌΣΜΟΣ']);
    expect(await changes()).toBe(before);
    // Only vectors holding a final sigma were rewritten.
    expect((await client.query(`SELECT xmin::text FROM ${part} WHERE id = '${doc(3)}'`)).rows[0].xmin).toBe(untouched);
    // The change trigger is on again.
    await client.query(`UPDATE ${part} SET data = data WHERE id = '${doc(3)}'`);
    expect(await changes()).toBe(before + 1);
  });
});

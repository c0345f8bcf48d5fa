/**
 * For tests that need a database of their own beside the suite's (migrations from scratch, the
 * CLI): its URL on the suite's PostgreSQL server, and one statement run on that server.
 */
import pg from 'pg';
import { inject } from 'vitest';

export function serverUrl(db: string): string {
  const u = new URL(inject('templateUrl'));
  u.pathname = '/' + db;
  return u.toString();
}

/** One statement on the server's `postgres` database (CREATE/DROP DATABASE). */
export async function onServer(sqlText: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(sqlText);
  } finally {
    await admin.end();
  }
}

/**
 * `plinth migrate --status` as a user runs it (the built bundle): on a fresh database every
 * migration is pending (exit 4) and nothing is changed; after `plinth migrate` each is listed
 * with its SHA-256 and the verdict is "in sync" (exit 0); a checksum row tampered with, or an
 * applied migration this version has no file for, is reported as drift (exit 3).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { ROOT_DIR } from '../../src/paths.js';

const BIN = path.join(ROOT_DIR, 'bin', 'plinth.js');
const NAME = `cli_status_${process.pid}_${Date.now().toString(36)}`;

function plinth(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'development', LOG_FORMAT: 'json', DATABASE_URL: serverUrl(NAME) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (err += String(c)));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function onDb(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const lineOf = (out: string, name: string) => out.split('\n').find((l) => l.includes(` ${name} `)) ?? '';

beforeAll(() => onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`));
afterAll(() => onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`));

describe('plinth migrate --status', { timeout: 120_000 }, () => {
  it('on a fresh database: every migration pending, exit 4, nothing applied', async () => {
    const run = await plinth(['migrate', '--status']);
    expect(run.code, run.err).toBe(4);
    expect(lineOf(run.out, '001_foundation')).toMatch(/^pending /);
    expect(run.out).toMatch(/0 applied, \d+ pending: run `plinth migrate` to apply them/);
    const again = await plinth(['migrate', '--status']);
    expect(again.out).toBe(run.out); // it changed nothing
  });

  it('after `plinth migrate`: each migration applied with its SHA-256, in sync, exit 0', async () => {
    expect((await plinth(['migrate'])).code).toBe(0);
    const run = await plinth(['migrate', '--status']);
    expect(run.code, run.err).toBe(0);
    const sha = createHash('sha256').update(readFileSync(path.join(ROOT_DIR, 'migrations', '001_foundation.sql'))).digest('hex');
    expect(lineOf(run.out, '001_foundation')).toMatch(new RegExp(`^ok +001_foundation +\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z ${sha}$`));
    expect(run.out).toMatch(/\d+ applied, 0 pending: in sync\n$/);
    expect(run.out).not.toContain('postgres://');
  });

  it('reports a tampered checksum and an unknown applied migration as drift, exit 3', async () => {
    await onDb(`UPDATE plinth_migration_checksums SET checksum = repeat('f', 64) WHERE name = '003_data'`);
    await onDb(`INSERT INTO pgmigrations (name, run_on) VALUES ('998_elsewhere', now())`);
    const run = await plinth(['migrate', '--status']);
    expect(run.code, run.err).toBe(3);
    expect(lineOf(run.out, '003_data')).toMatch(/^changed +003_data .* f{64}$/);
    expect(run.out).toContain('file now: ');
    expect(lineOf(run.out, '998_elsewhere')).toMatch(/^missing /);
    expect(run.out).toContain('DRIFT: 1 changed, 1 missing, 0 unknown');
  });

  it('refuses an unknown option of migrate with the usage (exit 2)', async () => {
    const run = await plinth(['migrate', '--stats']);
    expect(run.code).toBe(2);
    expect(run.err).toContain('unknown command "migrate --stats"');
    expect(run.err).toContain('migrate --status');
  });
});

/**
 * Docker cannot run on the machines that run this suite, so the production image and the
 * compose stack are kept correct here: every service the compose file promises, each with a
 * health check; every variable the Plinth services set is one src/config.ts reads, and the set
 * loads as a valid production configuration; the API nodes run no worker and sit behind a proxy
 * that names both; the image runs as a non-root user with CMD and HEALTHCHECK, and what its
 * stages COPY exists (in the repository, or after a build).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ROOT_DIR } from '../../src/paths.js';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  restart?: string;
}

const read = (file: string) => readFileSync(path.join(ROOT_DIR, file), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const plinthServices = Object.entries(services).filter(([, s]) => s.image === 'plinth:local');

/** Compose interpolation with test values: `${X:?message}` must be given, `${X:-default}`. */
const GIVEN: Record<string, string> = { ENCRYPTION_KEY: 'a'.repeat(64), DASHBOARD_JWT_SECRET: 'b'.repeat(64) };
function interpolate(value: string): string {
  return String(value)
    .replace(/\$\{([A-Z0-9_]+):\?[^}]*\}/g, (_m, name: string) => {
      if (!(name in GIVEN)) throw new Error(`test has no value for required ${name}`);
      return GIVEN[name]!;
    })
    .replace(/\$\{([A-Z0-9_]+):-([^}]*)\}/g, (_m, _name, def: string) => def)
    .replace(/\$\$/g, '$');
}

/** The Dockerfile's ENV of the runtime stage: what every container starts with. */
function dockerfile() {
  const text = read('Dockerfile').replace(/\\\n/g, ' ');
  const stages: Array<{ name: string; lines: string[] }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ name: from[1] ?? String(stages.length), lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}
const stages = dockerfile();
const runtime = stages.at(-1)!;
const imageEnv = Object.fromEntries(
  runtime.lines.filter((l) => /^ENV\s/.test(l)).flatMap((l) => [...l.slice(4).matchAll(/([A-Z0-9_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
);

/** Every variable src/config.ts reads (it is the only module that reads the environment). */
const CONFIG_KEYS = new Set([...read('src/config.ts').matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]!));
const REQUIRED_IN_PRODUCTION = [...read('src/config.ts').matchAll(/secret\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]!);

function configOf(service: Service) {
  const env = { ...imageEnv, ...Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(v)])) };
  const dataDir = path.join(os.tmpdir(), `plinth-compose-${process.pid}`);
  try {
    return { env, config: loadConfig({ ...env, PLINTH_DATA_DIR: dataDir }, false) };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('docker-compose.yml', () => {
  it('has PostgreSQL, Redis, an S3 store with a one-time bucket setup, two API nodes, a worker and a proxy', () => {
    for (const name of ['postgres', 'redis', 'minio', 'minio-setup', 'migrate', 'api1', 'api2', 'worker', 'proxy']) expect(services, name).toHaveProperty(name);
    expect(services['minio-setup']!.restart).toBe('no');
    expect(String(services['minio-setup']!.entrypoint ?? '')).toMatch(/mc mb --ignore-existing local\/plinth/);
  });

  it('gives every long-running service a health check, and starts nodes only once their dependencies are ready', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart === 'no') continue; // one-shot jobs
      expect(s.healthcheck?.test, `${name} health check`).toBeTruthy();
      expect(s.healthcheck?.disable, name).not.toBe(true);
    }
    for (const name of ['api1', 'api2', 'worker']) {
      expect(services[name]!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' }, 'minio-setup': { condition: 'service_completed_successfully' } });
    }
    expect(services.migrate!.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' } });
    expect(services.proxy!.depends_on).toMatchObject({ api1: { condition: 'service_healthy' }, api2: { condition: 'service_healthy' } });
  });

  it('sets on Plinth services only variables src/config.ts reads, and each set loads as a valid production configuration', () => {
    expect(plinthServices.map(([n]) => n).sort()).toEqual(['api1', 'api2', 'migrate', 'worker']);
    for (const [name, s] of plinthServices) {
      const unknown = Object.keys(s.environment ?? {}).filter((k) => !CONFIG_KEYS.has(k));
      expect(unknown, `${name} sets variables no code reads`).toEqual([]);
      const { env, config } = configOf(s);
      expect(config.production, name).toBe(true);
      for (const key of [...REQUIRED_IN_PRODUCTION, 'DATABASE_URL']) expect(env, `${name} ${key}`).toHaveProperty(key);
      expect(config.redisUrl, name).toBe('redis://redis:6379');
      expect(config.storage.driver, name).toBe('s3');
      expect(config.storage.s3.bucket, name).toBe('plinth');
    }
    expect(REQUIRED_IN_PRODUCTION.sort()).toEqual(['DASHBOARD_JWT_SECRET', 'ENCRYPTION_KEY']);
  });

  it('runs the worker only in the worker service, not in the API nodes', () => {
    for (const name of ['api1', 'api2']) {
      expect(configOf(services[name]!).config.runWorker, name).toBe(false);
      expect(services[name]!.command, name).toBeUndefined(); // the image's CMD: `plinth`
    }
    expect(services.worker!.command).toEqual(['plinth', 'worker']);
    expect(services.migrate!.command).toEqual(['plinth', 'migrate']);
  });

  it('puts both API nodes behind the proxy, whose config is in the repository and trusted as one hop', () => {
    const mount = services.proxy!.volumes?.find((v) => v.includes('nginx'));
    expect(mount).toBeDefined();
    const conf = read(mount!.split(':')[0]!.replace(/^\.\//, ''));
    const port = configOf(services.api1!).config.port;
    expect(conf).toContain(`server api1:${port}`);
    expect(conf).toContain(`server api2:${port}`);
    expect(conf).toMatch(/proxy_pass http:\/\/plinth_api;/);
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/); // overwritten: one trusted hop
    expect(configOf(services.api1!).config.trustProxy).toBe(1);
  });
});

describe('Dockerfile', () => {
  it('is multi-stage; the runtime stage runs as a non-root user, with a health check and a CMD that does not build', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const user = runtime.lines.filter((l) => /^USER\s/.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user!.split(/\s+/)[1]).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.lines.some((l) => /^HEALTHCHECK\s.*\/api\/health/.test(l))).toBe(true);
    const cmd = runtime.lines.filter((l) => /^CMD\s/.test(l)).at(-1);
    expect(cmd).toBe('CMD ["plinth"]');
    expect(runtime.lines.join('\n')).not.toMatch(/\b(tsx|npm (start|run))\b/);
    expect(runtime.lines.some((l) => /ln -s \/app\/bin\/plinth\.js \/usr\/local\/bin\/plinth/.test(l))).toBe(true);
  });

  it('sets only configuration keys in ENV', () => {
    expect(Object.keys(imageEnv).length).toBeGreaterThan(0);
    expect(Object.keys(imageEnv).filter((k) => !CONFIG_KEYS.has(k))).toEqual([]);
  });

  it('copies files that exist: from the repository, and from the build stage after a build', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const stage of stages) {
      for (const line of stage.lines.filter((l) => /^COPY\s/.test(l))) {
        const parts = line.split(/\s+/).slice(1);
        const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
        const sources = parts.filter((p) => !p.startsWith('--')).slice(0, -1);
        for (const src of sources) {
          if (!from) {
            expect(existsSync(path.join(ROOT_DIR, src)), `${line}: ${src}`).toBe(true);
            expect(ignored, `${src} is in .dockerignore`).not.toContain(src);
            continue;
          }
          // What the build stage produced, as a build in this checkout produces it.
          const local = src === '/tmp/dist' ? 'dist' : src.replace(/^\/app\//, '');
          expect(existsSync(path.join(ROOT_DIR, local)), `${line}: ${src}`).toBe(true);
        }
      }
    }
    for (const f of ['main.js', 'worker.js', 'migrate.js', 'ui/index.html']) expect(existsSync(path.join(ROOT_DIR, 'dist', f)), f).toBe(true);
  });

  it('the build stage copies every input of the build (read from the last build\'s manifest)', () => {
    const build = stages[0]!;
    const copied = build.lines.filter((l) => /^COPY\s/.test(l)).flatMap((l) => l.split(/\s+/).slice(1, -1).filter((p) => !p.startsWith('--')));
    const { inputs } = JSON.parse(readFileSync(path.join(ROOT_DIR, 'dist', 'inputs.json'), 'utf8')) as { inputs: Record<string, string> };
    const missing = Object.keys(inputs).filter((f) => !f.startsWith('node_modules/') && !copied.some((c) => f === c || f.startsWith(c.replace(/\/?$/, '/'))));
    expect(missing).toEqual([]);
  });
});

/**
 * Threat: a leaked API key that keeps working after rotation. The old key must fail at once,
 * on this node and on every other node sharing the database (their key caches are dropped
 * through LISTEN/NOTIFY), and the new key must work.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../../src/boot.js';
import { apiKeyAuth, projectOf } from '../../../src/modules/projects/api-key-auth.js';
import { registerErrorHandling } from '../../../src/plugins/errors.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let nodeB: Booted;
let probeB: FastifyInstance;
let project: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  // A second API node on the same database: its own pool, bus listener and key cache.
  nodeB = await boot(env.config, { skipMigrations: true, clock: env.clock });
  // A minimal keyed route on node B (the public routes belong to other domains).
  probeB = Fastify();
  registerErrorHandling(probeB);
  probeB.get('/probe', { preHandler: apiKeyAuth(nodeB.ctx) }, async (req: FastifyRequest) => ({ project: projectOf(req).id }));
  project = await makeProject(env.ctx);
});
afterAll(async () => {
  await probeB.close();
  await nodeB.close();
  await env.close();
});

const rotate = (keyType: string) =>
  env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/api-key`, headers: project.owner.auth, payload: { keyType } });
const probe = (key: string) => probeB.inject({ method: 'GET', url: '/probe', headers: { 'x-api-key': key } });

describe('POST /api/projects/:projectId/api-key', () => {
  it('rotating the secret key kills the old one on both nodes at once', async () => {
    // Warm both caches with the old key.
    expect((await env.ctx.projects.resolveKey(project.secretKey))?.kind).toBe('secret');
    expect((await probe(project.secretKey)).statusCode).toBe(200);

    const res = await rotate('secret');
    expect(res.statusCode).toBe(200);
    const { apiKey, keyType, project: view } = res.json().data;
    expect(keyType).toBe('secret');
    expect(apiKey).toMatch(/^sk_live_/);
    expect(view._id).toBe(project.id);

    expect(await env.ctx.projects.resolveKey(project.secretKey)).toBeNull();
    expect(await nodeB.ctx.projects.resolveKey(project.secretKey)).toBeNull();
    const old = await probe(project.secretKey);
    expect(old.statusCode).toBe(401);
    expect(old.json().message).toBe('API key is expired or invalid.');
    expect((await probe(apiKey)).json().project).toBe(project.id);
    // The publishable key is untouched.
    expect((await probe(project.publishableKey)).statusCode).toBe(200);
  });

  it('rotates the publishable key the same way', async () => {
    const res = await rotate('publishable');
    const { apiKey } = res.json().data;
    expect(apiKey).toMatch(/^pk_live_/);
    expect((await probe(project.publishableKey)).statusCode).toBe(401);
    expect((await probe(apiKey)).statusCode).toBe(200);
  });

  it('answers 401 api_key_invalid (with the action hint) for a key with neither prefix', async () => {
    expect(await env.ctx.projects.resolveKey(project.publishableKey.slice('pk_live_'.length))).toBeNull();
    const res = await probe('not-a-plinth-key');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'api_key_invalid', message: 'API key is expired or invalid.', action: expect.any(String) });
  });

  it('rejects an unknown keyType with 400 and the SDK text, and a missing body with 400', async () => {
    const res = await rotate('master');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe("Invalid keyType. Must be 'publishable' or 'secret'.");
    const none = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/api-key`, headers: project.owner.auth });
    expect(none.statusCode).toBe(400);
  });
});

/** The published @urbackend/sdk, unchanged, against a listening server. */
import urBackend from '@urbackend/sdk';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { objectId } from '../../../src/lib/ids.js';
import { createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let baseUrl: string;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  await createCollection(env, p, 'products', [{ key: 'name', type: 'String', required: true }, { key: 'price', type: 'Number' }]);
  await createCollection(env, p, 'todos', [{ key: 'title', type: 'String' }, { key: 'userId', type: 'String' }], { enabled: true, mode: 'private' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
});
afterAll(() => env.close());

describe('@urbackend/sdk db and schema modules', () => {
  it('insert, getAll, count, getOne, update, patch, delete', async () => {
    const client = urBackend({ apiKey: p.secretKey, baseUrl });
    const a = await client.db.insert('products', { name: 'Pen', price: 2 });
    expect(a).toMatchObject({ _id: expect.any(String), name: 'Pen', price: 2 });
    await client.db.insert('products', { name: 'Book', price: 12 });
    const all = await client.db.getAll('products', { sort: 'price:asc', filter: { price_gt: 1 } } as never);
    expect(all.map((d: { name: string }) => d.name)).toEqual(['Pen', 'Book']);
    expect(await client.db.count('products', { filter: { price_gt: 5 } } as never)).toBe(1);
    const one = await client.db.getOne('products', a._id);
    expect(one).toMatchObject({ _id: a._id, name: 'Pen' });
    const up = await client.db.update('products', a._id, { price: 3 });
    expect(up).toMatchObject({ _id: a._id, name: 'Pen', price: 3 });
    const pa = await client.db.patch('products', a._id, { name: 'Fancy pen' });
    expect(pa).toMatchObject({ name: 'Fancy pen', price: 3 });
    expect(await client.db.delete('products', a._id)).toEqual({ deleted: true });
    await expect(client.db.getOne('products', a._id)).rejects.toMatchObject({ name: 'NotFoundError', statusCode: 404 });
    await expect(client.db.insert('products', { price: 1 })).rejects.toMatchObject({ name: 'ValidationError', statusCode: 400 });
    expect(await client.db.getAll('missing')).toEqual([]);
  });

  it('schema.getSchema returns the collection record', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const schema = await client.schema.getSchema('products');
    expect(schema).toMatchObject({ name: 'products', model: [{ key: 'name', type: 'String', required: true }, { key: 'price', type: 'Number' }] });
  });

  it('publishable key with a user token on a private collection', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const token = await makeUserToken(env.ctx, p, objectId());
    const t = await client.db.insert('todos', { title: 'mine' }, token);
    expect(await client.db.getAll('todos', {}, token)).toHaveLength(1);
    expect(await client.db.count('todos', {}, token)).toBe(1);
    expect(await client.db.getOne('todos', t._id, {}, token)).toMatchObject({ title: 'mine' });
  });
});

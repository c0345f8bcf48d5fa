/**
 * The console's pure logic, outside the browser: the filter builder writes exactly the data
 * API's query grammar (and reads it back), and the pre-save check gives the server's messages
 * for the schema rules it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { parseSort, queryToRows, rowsToQuery, sortParam } from '../../ui/src/lib/query.js';
import { skeleton, validateDocument, withoutSystem } from '../../ui/src/lib/validate.js';
import { parseListQuery } from '../../src/modules/data/query.js';
import { validateDocument as serverValidate } from '../../src/modules/collections/validate.js';
import type { FieldDef } from '../../ui/src/lib/types.js';

describe('filter builder ↔ query string', () => {
  it('writes field=value for equality and field_<op>=value otherwise, which the server parses back', () => {
    const rows = [
      { field: 'category', op: 'eq', value: 'books' },
      { field: 'price', op: 'gte', value: '10' },
      { field: 'tags', op: 'in', value: 'a,b' },
      { field: 'meta.views', op: 'exists', value: 'true' },
      { field: 'title', op: 'regex', value: '^L' },
      { field: '  ', op: 'eq', value: 'ignored' },
    ] as const;
    const q = rowsToQuery([...rows]);
    expect(q.toString()).toBe('category=books&price_gte=10&tags_in=a%2Cb&meta.views_exists=true&title_regex=%5EL');
    const parsed = parseListQuery(Object.fromEntries(q));
    expect(parsed.filters).toEqual([
      { field: 'category', op: 'eq', values: ['books'] },
      { field: 'price', op: 'gte', values: ['10'] },
      { field: 'tags', op: 'in', values: ['a', 'b'] },
      { field: 'meta.views', op: 'exists', values: ['true'] },
      { field: 'title', op: 'regex', values: ['^L'] },
    ]);
    expect(queryToRows(q)).toEqual(rows.slice(0, 5));
  });

  it('leaves the options (sort, limit, cursor, include_deleted…) out of the filter rows', () => {
    expect(queryToRows('?sort=-price&limit=50&cursor=abc&include_deleted=true&price_lt=5')).toEqual([{ field: 'price', op: 'lt', value: '5' }]);
  });

  it('sort state ↔ the sort parameter', () => {
    expect(sortParam({ field: 'price', desc: false })).toBe('price:asc');
    expect(sortParam({ field: 'price', desc: true })).toBe('-price');
    expect(parseSort('-price,title')).toEqual({ field: 'price', desc: true });
    expect(parseSort('title:desc')).toEqual({ field: 'title', desc: true });
    expect(parseSort(null)).toBeNull();
  });
});

describe('pre-save document check', () => {
  const fields: FieldDef[] = [
    { key: 'title', type: 'String', required: true },
    { key: 'price', type: 'Number' },
    { key: 'when', type: 'Date' },
    { key: 'author', type: 'Ref', ref: 'authors' },
    { key: 'tags', type: 'Array', items: { type: 'Number' } },
    { key: 'address', type: 'Object', fields: [{ key: 'city', type: 'String', required: true }] },
  ];
  const cases: Array<[string, unknown, 'insert' | 'update']> = [
    ['missing required', { price: 1 }, 'insert'],
    ['wrong type', { title: 'x', price: '1' }, 'insert'],
    ['bad date', { title: 'x', when: 'someday' }, 'insert'],
    ['bad ref', { title: 'x', author: 'nope' }, 'insert'],
    ['bad array item', { title: 'x', tags: [1, 'two'] }, 'insert'],
    ['nested required', { title: 'x', address: {} }, 'insert'],
    ['update checks only given keys', { price: 'x' }, 'update'],
  ];
  it.each(cases)('%s: the same message as the server', (_name, doc, mode) => {
    const server = serverValidate(fields as never, doc as Record<string, unknown>, mode);
    expect(server.ok).toBe(false);
    expect(validateDocument(fields, doc, mode)).toBe((server as { message: string }).message);
  });

  it('accepts what the server accepts; skeleton fills required fields; system fields are dropped', () => {
    const good = { title: 'x', price: 2, when: '2024-01-01', author: 'a'.repeat(24), tags: [1], address: { city: 'Oslo' } };
    expect(validateDocument(fields, good, 'insert')).toBeNull();
    expect(serverValidate(fields as never, good, 'insert').ok).toBe(true);
    expect(validateDocument(fields, skeleton(fields), 'insert')).toBeNull();
    expect(withoutSystem({ _id: '1', createdAt: 'x', isDeleted: false, title: 'y' })).toEqual({ title: 'y' });
    expect(validateDocument(fields, [1], 'insert')).toBe('A document must be a JSON object.');
  });
});

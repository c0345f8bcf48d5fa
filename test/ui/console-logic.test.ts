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
import { fromForm, toForm } from '../../ui/src/lib/doc-form.js';

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
    { key: 'address', type: 'Object', fields: [{ key: 'city', type: 'String', required: true }, { key: 'tone', type: 'String', enum: ['dry', 'warm'] }] },
    { key: 'status', type: 'String', enum: ['draft', 'live'] },
    { key: 'stars', type: 'Number', enum: [1, 2, 3] },
  ];
  const cases: Array<[string, unknown, 'insert' | 'update']> = [
    ['missing required', { price: 1 }, 'insert'],
    ['wrong type', { title: 'x', price: '1' }, 'insert'],
    ['bad date', { title: 'x', when: 'someday' }, 'insert'],
    ['bad ref', { title: 'x', author: 'nope' }, 'insert'],
    ['bad array item', { title: 'x', tags: [1, 'two'] }, 'insert'],
    ['nested required', { title: 'x', address: {} }, 'insert'],
    ['update checks only given keys', { price: 'x' }, 'update'],
    ['update clearing a required field (the form sends null for an emptied input)', { title: null }, 'update'],
    ['a String outside its allowed values', { title: 'x', status: 'gone' }, 'insert'],
    ['a Number outside its allowed values', { title: 'x', stars: 4 }, 'insert'],
    ['a nested field outside its allowed values', { title: 'x', address: { city: 'Oslo', tone: 'wet' } }, 'insert'],
    ['an update outside the allowed values', { status: 'Draft' }, 'update'],
  ];
  it.each(cases)('%s: the same message as the server', (_name, doc, mode) => {
    const server = serverValidate(fields as never, doc as Record<string, unknown>, mode);
    expect(server.ok).toBe(false);
    expect(validateDocument(fields, doc, mode)).toBe((server as { message: string }).message);
  });

  it('accepts what the server accepts; skeleton fills required fields; system fields are dropped', () => {
    const good = { title: 'x', price: 2, when: '2024-01-01', author: 'a'.repeat(24), tags: [1], address: { city: 'Oslo', tone: 'dry' }, status: ' live ', stars: 3 };
    expect(validateDocument(fields, good, 'insert')).toBeNull();
    expect(serverValidate(fields as never, good, 'insert').ok).toBe(true);
    expect(validateDocument(fields, skeleton(fields), 'insert')).toBeNull();
    expect(withoutSystem({ _id: '1', createdAt: 'x', isDeleted: false, title: 'y' })).toEqual({ title: 'y' });
    expect(validateDocument(fields, [1], 'insert')).toBe('A document must be a JSON object.');
  });
});

describe('document form ↔ document', () => {
  const fields: FieldDef[] = [
    { key: 'title', type: 'String', required: true },
    { key: 'price', type: 'Number' },
    { key: 'when', type: 'Date' },
    { key: 'done', type: 'Boolean' },
    { key: 'tags', type: 'Array', items: { type: 'String' } },
  ];
  it('round-trips a document, undeclared keys through the JSON box', () => {
    const doc = { _id: 'x', createdAt: 'c', title: 'T', price: 2.5, when: '2026-01-02T03:04:05.678Z', done: true, tags: ['a'], extra: { n: 1 } };
    const form = toForm(fields, doc);
    expect(form.drafts.price).toBe('2.5');
    expect(form.drafts.done).toBe(true);
    expect(JSON.parse(form.extra)).toEqual({ extra: { n: 1 } });
    expect(fromForm(fields, form, doc)).toEqual({ ok: true, value: { title: 'T', price: 2.5, when: '2026-01-02T03:04:05.678Z', done: true, tags: ['a'], extra: { n: 1 } } });
  });
  it('an emptied input clears the key on update (null) and is left out of a new document', () => {
    const doc = { _id: 'x', title: 'T', price: 3 };
    const form = toForm(fields, doc);
    form.drafts.price = '';
    expect(fromForm(fields, form, doc)).toEqual({ ok: true, value: { title: 'T', price: null } });
    const fresh = toForm(fields, null);
    fresh.drafts.title = 'New';
    expect(fromForm(fields, fresh, null)).toEqual({ ok: true, value: { title: 'New' } });
  });
  it('keeps what does not parse as typed, so the pre-save check names the field', () => {
    const form = toForm(fields, null);
    form.drafts.title = 'x';
    form.drafts.price = 'abc';
    const r = fromForm(fields, form, null);
    expect(r.ok && validateDocument(fields, r.value, 'insert')).toBe("Field 'price' must be a Number.");
  });
});

/**
 * An update's previous version (rebuilt from the new document and the change row's
 * difference) is what realtime's `leave` decision reads for every subscriber of the collection:
 * it is rebuilt once per change, not once per subscriber (a copy of the whole document each).
 */
import { describe, expect, it } from 'vitest';
import { previousCandidateOf } from '../../../src/modules/realtime/event.js';
import type { ChangeRow } from '../../../src/modules/realtime/queries.js';

const update = (over: Partial<ChangeRow> = {}): ChangeRow => ({
  xid: '1', id: '1', project_id: 'p', collection: 'posts', doc_id: 'd', action: 'update', owner_id: null, version: 2,
  data: { title: 'new', score: 5, added: true }, truncated: false, created_ms: 1, updated_ms: 3, deleted_ms: null, at_ms: 3,
  prev_fields: { score: 100, ['__proto__']: 'a field' }, prev_absent: ['added'], prev_updated_ms: 2, ...over,
});

describe("an update's previous version", () => {
  it('is rebuilt once per change: every subscriber reads the same one', () => {
    const row = update();
    const first = previousCandidateOf(row);
    expect(previousCandidateOf(row)).toBe(first);
    expect(first).not.toBeNull();
    expect(Object.hasOwn(first!.data, '__proto__')).toBe(true);
    expect({ ...first!.data }).toEqual({ title: 'new', score: 100, ['__proto__']: 'a field' });
    expect(first!.updatedMs).toBe(2);
  });

  it('is unknown (null, also remembered) for a truncated update or one without a recorded difference', () => {
    const truncated = update({ data: null, truncated: true, prev_fields: null, prev_absent: null });
    expect(previousCandidateOf(truncated)).toBeNull();
    expect(previousCandidateOf(truncated)).toBeNull();
    expect(previousCandidateOf(update({ action: 'create' }))).toBeNull();
  });
});

/** TypeBox shapes shared by the collection routes (they feed /docs). */
import { Type } from '@sinclair/typebox';
import { COMPOUND_INDEXES_MAX, FIELDS_MAX, FIELDS_MIN } from './compound.js';

export const ProjectParams = Type.Object({ projectId: Type.String({ maxLength: 64 }) });
export const CollectionParams = Type.Object({
  projectId: Type.String({ maxLength: 64 }),
  name: Type.String({ maxLength: 200 }),
});

/** Field definitions are checked by validateFieldDefs (precise messages), not here. */
export const SearchLanguage = Type.String({ maxLength: 32, description: 'full-text search language: simple (default), english, french, … (docs/data.md)' });
export const FieldList = Type.Array(Type.Unknown(), { maxItems: 200, description: 'Field[] (docs/wire-compatibility.md §4.2; `hidden` and `readOnly`: docs/rules.md; `enum`: docs/data.md "Allowed values")' });

/**
 * The bounds here only stop abuse (twice the real limits); validateCompoundIndexes applies the
 * real ones, with a message that names the problem (400 invalid_schema).
 */
export const IndexList = Type.Array(
  Type.Object({ fields: Type.Array(Type.String({ maxLength: 128 }), { maxItems: 2 * FIELDS_MAX }) }, { additionalProperties: false }),
  {
    maxItems: 2 * COMPOUND_INDEXES_MAX,
    description: `Compound indexes: [{ fields: [declared top-level field, ...] }] (${FIELDS_MIN}-${FIELDS_MAX} fields each, at most ${COMPOUND_INDEXES_MAX})`,
  },
);

export const RlsBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String({ maxLength: 40, description: 'public-read | private | owner-write-only' })),
    ownerField: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    requireAuthForWrite: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const RlsView = Type.Object({
  enabled: Type.Boolean(),
  mode: Type.String(),
  ownerField: Type.String(),
  requireAuthForWrite: Type.Boolean(),
});

export const CollectionView = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  model: Type.Array(Type.Unknown()),
  rls: RlsView,
  indexes: Type.Array(Type.Object({ fields: Type.Array(Type.String()) })),
  searchLanguage: Type.String({ description: 'text search configuration of the full-text search (docs/data.md)' }),
  realtime: Type.Boolean({ description: 'changes are streamed to realtime subscribers (docs/realtime.md)' }),
  schemaVersion: Type.Number(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const envelopeOf = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.Array>>(data: T) =>
  Type.Object({ success: Type.Boolean(), data, message: Type.String() });

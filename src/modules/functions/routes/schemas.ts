/** TypeBox shapes of the functions routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export { envelopeOf as envelope } from '../../operators/schemas.js';
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const ProjectParams = Type.Object({ projectId: Type.String() });
export const FunctionParams = Type.Object({ projectId: Type.String(), name: Type.String({ maxLength: 63 }) });
export const VersionParams = Type.Object({ projectId: Type.String(), name: Type.String({ maxLength: 63 }), version: Type.Integer({ minimum: 1 }) });
export const SecretParams = Type.Object({ projectId: Type.String(), name: Type.String({ pattern: '^[A-Z_][A-Z0-9_]{0,63}$', description: 'UPPER_SNAKE_CASE' }) });

export const Kind = Type.Union(['http', 'before', 'after', 'auth', 'schedule'].map((k) => Type.Literal(k)), {
  description: 'http: /api/functions/:name; before: a collection write, in its path; after: a change or an auth event, in the workers; auth: before-sign-up or token-claims; schedule: a cron expression',
});
export const Language = Type.Union([Type.Literal('js'), Type.Literal('ts')], { description: 'TypeScript is compiled at deploy (esbuild)' });
const Source = Type.String({ minLength: 1, maxLength: 256 * 1024, description: 'one self-contained ES module whose default export is the function' });
const Trigger = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'before: {collection, events?: [create, update, delete]}; after: {collection, events?: [create, update, delete, restore]} or {auth: [sign-up, sign-in, delete]}; auth: {event: before-sign-up | token-claims}; schedule: {cron}; http: {}',
});

export const CreateBody = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'lower case letters, digits, - and _' }),
    kind: Kind,
    trigger: Type.Optional(Trigger),
    source: Source,
    language: Type.Optional(Language),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const ChangeBody = Type.Object(
  { source: Type.Optional(Source), language: Type.Optional(Language), trigger: Type.Optional(Trigger), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const RollbackBody = Type.Object({ version: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
export const RunBody = Type.Object(
  {
    event: Type.Optional(Type.Unknown({ description: 'what the function is called with; for an HTTP function, the request it sees' })),
    as: Type.Optional(Type.Union([Type.Literal('anonymous'), Type.Literal('service')], { description: 'the identity plinth.data acts with (default: anonymous)' })),
  },
  { additionalProperties: false },
);
export const SecretBody = Type.Object({ value: Type.String({ maxLength: 48 * 1024 }) }, { additionalProperties: false });
export const InvocationsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  before: Type.Optional(Type.String({ pattern: '^[0-9]{1,19}$' })),
});

export const FunctionView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  trigger: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  version: Type.Integer({ description: 'the active version' }),
  versions: Type.Integer(),
  language: Type.String(),
  hash: Type.String({ description: 'sha256 of the compiled code' }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const VersionView = Type.Object({ version: Type.Integer(), language: Type.String(), hash: Type.String(), active: Type.Boolean(), createdAt: Type.String() });
const LogLine = Type.Object({ level: Type.String(), text: Type.String(), at: Type.Number() });
export const InvocationView = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  trigger: Type.String(),
  ok: Type.Boolean(),
  errorCode: Nullable(Type.String()),
  error: Nullable(Type.String()),
  durationMs: Type.Number(),
  cpuMs: Type.Number(),
  logs: Type.Array(LogLine),
  logsDropped: Type.Integer(),
  at: Type.String(),
});
export const RunView = Type.Object({
  ok: Type.Boolean(),
  value: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Type.String(), status: Type.Integer(), message: Type.String() })),
  logs: Type.Array(LogLine),
  logsDropped: Type.Integer(),
  durationMs: Type.Number(),
  cpuMs: Type.Number(),
});
export const StatsView = Type.Object({ name: Type.String(), invocations: Type.Integer(), errors: Type.Integer(), p50Ms: Nullable(Type.Number()), p99Ms: Nullable(Type.Number()) });

/** GET / PATCH /api/projects/:projectId/collections/:name/rules (docs/rules.md). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams, envelopeOf } from '../../collections/schemas.js';
import { getRules, updateRules } from '../service.js';

const Rule = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
const Rules = Type.Object({ list: Rule, view: Rule, create: Rule, update: Rule, delete: Rule });
const Body = Type.Partial(Rules, { additionalProperties: false });
const Policy = Type.Object({
  name: Type.String(),
  command: Type.String(),
  roles: Type.Array(Type.String()),
  using: Type.Union([Type.String(), Type.Null()]),
  withCheck: Type.Union([Type.String(), Type.Null()]),
});
const Warning = Type.Object({
  action: Type.String(),
  code: Type.String({ description: 'rule_no_index (the plan reads a whole collection) or rule_not_leakproof' }),
  message: Type.String(),
  plan: Type.Optional(Type.String({ description: 'EXPLAIN of the statement the warning is about' })),
});
const Broken = Type.Object({
  action: Type.String(),
  reason: Type.String({ description: 'Why the rule can no longer be applied (e.g. it looks up a deleted collection)' }),
});
const Data = Type.Object({
  name: Type.String(),
  rules: Rules,
  /**
   * Rules marked broken (docs/rules.md, "When a looked-up collection goes"): each denies
   * everything (its `sql` is `false`) until the rules are saved again; empty when none.
   */
  broken: Type.Array(Broken),
  /** The compiled policy expressions, per action that has a rule (read-only). */
  sql: Type.Record(Type.String(), Type.String()),
  /** The partition's policies as PostgreSQL holds them (read-only). */
  policies: Type.Array(Policy),
  /** Conditions that cannot use an index, each with its plan (docs/rules.md, "Index warnings"). */
  warnings: Type.Array(Warning),
});
const schema = { tags: ['dashboard: collections'], params: CollectionParams, response: { 200: envelopeOf(Data) } };

export default async function rulesRoute(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/projects/:projectId/collections/:name/rules', { schema: { ...schema, summary: 'Access rules of a collection and their SQL' } }, async (req) => {
    const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
    return ok(await getRules(ctx, project.id, req.params.name));
  });
  app.patch(
    '/api/projects/:projectId/collections/:name/rules',
    { schema: { ...schema, body: Body, summary: 'Change the access rules of a collection' } },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await updateRules(ctx, project.id, req.params.name, req.body), 'Collection rules updated');
    },
  );
}

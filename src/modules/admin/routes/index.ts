/** /api/admin: platform administration, for the ADMIN_EMAIL operator only (403 otherwise). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { PLANS } from '../../plans/plans.js';
import { envelopeOf, OperatorUser } from '../../operators/schemas.js';
import { changePlan, listOperators } from '../service.js';
import { operatorOf } from '../../operators/auth.js';
import { setOperatorMfaRequired } from '../../operators/mfa.js';

const TAGS = ['dashboard: admin'];
const OperatorEntry = Type.Composite([OperatorUser, Type.Object({ projectsCount: Type.Integer() })]);

export default async function adminRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/admin/operators',
    { schema: { tags: TAGS, summary: 'Every operator account', response: { 200: envelopeOf(Type.Array(OperatorEntry)) } } },
    async () => ok(await listOperators(ctx)),
  );

  app.get(
    '/api/admin/plans',
    { schema: { tags: TAGS, summary: 'The plans and their limits (-1: unlimited)', response: { 200: envelopeOf(Type.Unknown({ description: '{free: {...limits}, pro: {...limits}}' })) } } },
    async () => ok(PLANS),
  );

  app.patch(
    '/api/admin/operators/:id/plan',
    {
      schema: {
        tags: TAGS,
        summary: "Set an operator's plan (applies to all their projects at once)",
        params: Type.Object({ id: Type.String() }),
        // Checked in the service, for one clear message.
        body: Type.Object({ plan: Type.String({ description: "'free' or 'pro'" }) }),
        response: { 200: envelopeOf(Type.Object({ user: OperatorUser })) },
      },
    },
    async (req) => ok({ user: await changePlan(ctx, req.params.id, req.body.plan) }, 'Plan updated'),
  );

  app.put(
    '/api/admin/settings/operator-mfa',
    {
      schema: {
        tags: TAGS,
        summary: 'Require a second factor of every operator (or stop requiring it); audited',
        body: Type.Object({ required: Type.Boolean() }),
        response: { 200: envelopeOf(Type.Object({ required: Type.Boolean() })) },
      },
    },
    async (req) => {
      await setOperatorMfaRequired(ctx, operatorOf(req), req.body.required);
      return ok({ required: req.body.required }, 'Operator second-factor policy updated');
    },
  );
}

/** Schema pieces and route options shared by the AI routes. */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';

export const ProjectParams = Type.Object({ projectId: Type.String() });

/**
 * `aiKey`: a string or null. One JSON-schema type list (not anyOf), so the app's type
 * coercion never turns null into "" or "" into null.
 */
export const AiKeyBody = Type.Object(
  { aiKey: Type.Unsafe<string | null>({ type: ['string', 'null'], description: "A Groq key ('gsk_…', at most 200 characters), or null to clear" }) },
  { additionalProperties: false },
);

export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data, message: Type.String() });
}

export const KeyState = envelope(Type.Object({ hasAiKey: Type.Boolean() }));


export function keyMessage(hasAiKey: boolean): string {
  return hasAiKey ? 'AI key saved.' : 'AI key removed.';
}

/** Options of an AI feature route: operator session, `:projectId` params, one AI session per call. */
export function aiFeatureOptions<B extends TSchema, R extends TSchema>(ctx: AppContext, summary: string, body: B, result: R) {
  return {
    schema: { tags: ['ai'], summary, params: ProjectParams, body, response: { 200: result } },
  };
}

/** The `:projectId` project of the request, owned by the signed-in operator (400/404 otherwise). */
export function ownedProject(ctx: AppContext, req: FastifyRequest & { params: { projectId: string } }) {
  return loadMemberProject(ctx, operatorOf(req), req.params.projectId);
}

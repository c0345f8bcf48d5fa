/** Schema pieces shared by the AI routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export const ProjectParams = Type.Object({ projectId: Type.String() });

/**
 * `aiKey`: a string or null. One JSON-schema type list (not anyOf), so the app's type
 * coercion never turns null into "" or "" into null.
 */
export const AiKeyBody = Type.Object(
  { aiKey: Type.Unsafe<string | null>({ type: ['string', 'null'], description: "A Groq key ('gsk_…', at most 200 characters), or null to clear" }) },
  { additionalProperties: false },
);

export const KeyState = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ hasAiKey: Type.Boolean() }),
  message: Type.String(),
});

export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data, message: Type.String() });
}

export const operatorSecurity = [{ operatorBearer: [] }];

export function keyMessage(hasAiKey: boolean): string {
  return hasAiKey ? 'AI key saved.' : 'AI key removed.';
}

/** TypeBox shapes of the webhook routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export const ProjectParams = Type.Object({ projectId: Type.String() });
export const EndpointParams = Type.Object({ projectId: Type.String(), endpointId: Type.String() });
export const DeliveryParams = Type.Object({ projectId: Type.String(), endpointId: Type.String(), deliveryId: Type.String() });

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const EndpointView = Type.Object({
  _id: Type.String(),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(Type.String()),
  collections: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String()),
  failingSince: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const DeliveryView = Type.Object({
  _id: Type.String({ description: 'the webhook-id header of every attempt' }),
  eventType: Type.String(),
  status: Type.String({ description: 'pending, succeeded or failed' }),
  attempts: Type.Number(),
  nextAttemptAt: Nullable(Type.String()),
  createdAt: Type.String(),
  finishedAt: Nullable(Type.String()),
  payload: Type.Unknown(),
  log: Type.Array(
    Type.Object({
      attempt: Type.Number(),
      at: Type.String(),
      statusCode: Nullable(Type.Number()),
      durationMs: Type.Number(),
      response: Nullable(Type.String({ description: 'the first 1 KB of the answer' })),
      error: Nullable(Type.String()),
    }),
  ),
  outcome: Type.Optional(Type.String()),
});

export const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });

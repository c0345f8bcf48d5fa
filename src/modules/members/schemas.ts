/** TypeBox shapes of the teams routes (docs/teams.md). */
import { Type } from '@sinclair/typebox';

export const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('developer'), Type.Literal('viewer')]);
/** A role one can be given or invited with (never owner: ownership is transferred). */
export const GivenRole = Type.String({ enum: ['admin', 'developer', 'viewer'], description: "'admin', 'developer' or 'viewer'" });

export const ProjectParams = Type.Object({ projectId: Type.String({ description: '24-hex project id' }) });
export const MemberParams = Type.Object({ projectId: Type.String(), operatorId: Type.String({ maxLength: 64 }) });
export const InvitationParams = Type.Object({ projectId: Type.String(), invitationId: Type.String({ maxLength: 64 }) });

export const Member = Type.Object({
  operatorId: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  role: RoleSchema,
  addedBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const Invitation = Type.Object({
  _id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  invitedBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});

export const Transfer = Type.Object({
  toOperatorId: Type.String(),
  toEmail: Type.String(),
  fromOperatorId: Type.String(),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});

export const Token = Type.String({ minLength: 20, maxLength: 200, description: 'The token of the invitation link' });

export const InvitationPreview = Type.Object({
  projectName: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  invitedBy: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String(),
  accountExists: Type.Boolean(),
});

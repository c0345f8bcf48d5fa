/** Kysely types of teams' tables (migrations/071_project_members.sql). */
import type { Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Role } from './roles.js';

export interface ProjectMembersTable {
  project_id: string;
  operator_id: string;
  role: Role;
  added_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProjectInvitationsTable {
  id: Generated<string>;
  project_id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  token_hash: string;
  invited_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: string | null;
  revoked_at: Timestamp | null;
}

export interface ProjectTransfersTable {
  project_id: string;
  from_id: string;
  to_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface MemberTables {
  project_members: ProjectMembersTable;
  project_invitations: ProjectInvitationsTable;
  project_transfers: ProjectTransfersTable;
}

/** Errors of teams: members, roles, invitations, transfers (docs/teams.md). */
import { defineErrors } from '../../lib/errors.js';

export const MemberErrors = defineErrors('members', {
  project_role_forbidden: { status: 403, message: 'Your role in this project does not allow this.' },
  member_not_found: { status: 404, message: 'Member not found.' },
  member_is_owner: { status: 403, message: "The project's owner cannot be removed or given another role; transfer the ownership first." },
  role_above_own: { status: 403, message: 'You cannot give a role above your own.' },
  role_invalid: { status: 400, message: "Role must be one of 'admin', 'developer' or 'viewer'." },
  owner_cannot_leave: { status: 409, message: 'The owner cannot leave the project; transfer the ownership first.' },
  member_exists: { status: 409, message: 'This address already belongs to a member of the project.' },
  member_limit_reached: { status: 409, message: 'The project has reached its limit of members and pending invitations.' },
  invitation_rate_limited: { status: 429, message: 'Too many invitations sent in the last hour. Try again later.' },
  invitation_not_found: { status: 404, message: 'Invitation not found.' },
  invitation_invalid: { status: 400, message: 'This invitation link is not valid: it was revoked, already used, or never existed.' },
  invitation_expired: { status: 410, message: 'This invitation has expired. Ask for a new one.' },
  invitation_email_mismatch: { status: 403, message: 'This invitation was sent to another address. Sign in with the invited address.' },
  invitation_email_unverified: { status: 403, message: 'Verify your email address first, then accept the invitation.' },
  transfer_target_invalid: { status: 400, message: "Ownership can only be transferred to one of the project's admins." },
  transfer_not_found: { status: 404, message: 'There is no pending ownership transfer to you for this project.' },
  transfer_expired: { status: 410, message: 'The ownership transfer has expired. Ask the owner to offer it again.' },
  owns_projects: { status: 409, message: 'You own projects: transfer or delete them before deleting your account.' },
});

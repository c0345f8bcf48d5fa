/**
 * The signed-in user's own account: GET /me, PUT /update-profile, PUT /change-password
 * (docs/wire-compatibility.md §2.6, §2.12, §2.13), and GET /public/:username (safe fields only, §2.7).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { optionalUser, userClaimsOf, userIdOf } from '../user-auth.js';
import { AuthErrors } from '../errors.js';
import { checkNewPassword } from '../inputs.js';
import { schemaOf } from '../schema.js';
import { changePassword, currentUser, publicProfile, updateProfile } from '../service.js';
import { toPublicProfile, toUser } from '../users.js';


/** The signed-in user's own account (the endUser group: a valid access token is required). */
export async function accountFlow(app: App, ctx: AppContext): Promise<void> {

  app.get('/api/userAuth/me', {
    schema: { tags: ['userAuth'], summary: 'The signed-in user (without password)' },
    handler: async (req) => {
      const userId = userIdOf(req);
      const user = await currentUser(ctx, projectOf(req), userId);
      return ok(toUser(user, schemaOf(req)), 'User fetched successfully');
    },
  });

  app.put('/api/userAuth/update-profile', {
    schema: {
      tags: ['userAuth'],
      summary: 'Update custom profile fields (password, email, _id and $-keys are ignored)',
      body: Type.Record(Type.String(), Type.Unknown()),
    },
    handler: async (req) => {
      const userId = userIdOf(req);
      await updateProfile(ctx, projectOf(req), schemaOf(req), userId, req.body, userClaimsOf(req).custom);
      return done('Profile updated successfully');
    },
  });

  app.put('/api/userAuth/change-password', {
    schema: {
      tags: ['userAuth'],
      summary: 'Change the password (checks the current one; revokes every session of the user); a user with a second factor needs an aal2 token (403 mfa_required)',
      body: Type.Object({ currentPassword: Type.String(), newPassword: Type.String() }),
    },
    handler: async (req) => {
      if (!req.body.currentPassword) throw AuthErrors.invalid_input('Current password is required');
      const next = checkNewPassword(req.body.newPassword, 'New password');
      await changePassword(ctx, projectOf(req), userClaimsOf(req), req.body.currentPassword.slice(0, 1024), next);
      return done('Password changed successfully');
    },
  });
}

/** A public profile by username (the API key is enough). */
export async function publicProfileFlow(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/userAuth/public/:username', {
    schema: {
      tags: ['userAuth'],
      summary: "A user's public profile by username: _id, non-sensitive schema fields, timestamps",
      params: Type.Object({ username: Type.String({ minLength: 1, maxLength: 100 }) }),
    },
    handler: async (req) => {
      const schema = schemaOf(req);
      const user = await publicProfile(ctx, projectOf(req), schema, req.params.username, await optionalUser(ctx, req));
      return ok(toPublicProfile(user, schema), 'Public profile fetched successfully');
    },
  });
}

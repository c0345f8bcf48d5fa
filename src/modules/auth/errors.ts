/** Stable error codes of the end-user auth endpoints (docs/wire-compatibility.md §2). */
import { defineErrors } from '../../lib/errors.js';

export const AuthErrors = defineErrors('auth', {
  auth_disabled: {
    status: 403,
    message: 'Please enable Auth in the urBackend dashboard for this project to use this endpoint.',
  },
  users_schema_missing: {
    status: 403,
    message: "User Schema Missing: create a 'users' collection with 'email' and 'password' fields to use authentication.",
  },
  users_schema_invalid: {
    status: 422,
    message: "Invalid Users Schema: the 'users' collection needs a required String 'email' and a required String 'password'.",
  },
  invalid_input: { status: 400, message: 'Invalid input.' },
  email_taken: { status: 409, message: 'User already exists with this email.' },
  field_taken: { status: 409, message: 'User already exists with this value of a unique field.' },
  user_not_found: { status: 404, message: 'User not found' },
  invalid_current_password: { status: 400, message: 'Invalid current password' },
  invalid_otp: { status: 400, message: 'Invalid or expired OTP' },
  otp_cooldown: { status: 429, message: 'Please wait before requesting another code.' },
  username_field_missing: { status: 400, message: "Public profile requires a 'username' field in users schema" },
  refresh_missing: { status: 401, message: 'Refresh token missing' },
  refresh_format: { status: 401, message: 'Invalid refresh token format' },
  refresh_not_found: { status: 401, message: 'Refresh session not found' },
  refresh_wrong_project: { status: 403, message: 'Refresh token does not belong to this project' },
  session_not_found: { status: 404, message: 'Session not found or does not belong to this user' },
  app_user_not_found: { status: 404, message: 'User not found in this project' },
  user_disabled: { status: 403, message: 'This account has been disabled.' },
  passwordless_invalid: { status: 400, message: 'Invalid or expired sign-in link or code.' },
  redirect_not_allowed: { status: 400, message: "redirectTo is not one of the project's site URL or redirect URLs." },
  signup_disabled: { status: 403, message: 'This project does not allow new accounts.' },
  anonymous_disabled: { status: 403, message: 'This project does not allow anonymous sign-in.' },
  user_field_reserved: {
    status: 400,
    message: 'This key cannot be set as a profile field: email, password and emailVerified have their own members, system keys none.',
  },
  invite_with_password: { status: 400, message: 'An invitation is for an account created without a password.' },
  user_not_anonymous: { status: 409, message: 'This account already has an email; only an anonymous account can link one this way.' },
});

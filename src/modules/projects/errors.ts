/** Errors of the projects domain (texts from docs/wire-compatibility.md §10.3). */
import { defineErrors } from '../../lib/errors.js';

export const ProjectErrors = defineErrors('projects', {
  project_not_found: { status: 404, message: 'Project not found.' },
  project_limit_reached: { status: 403, message: 'Project limit reached. Please upgrade your plan to create more projects.' },
  invalid_site_url: { status: 400, message: 'Site URL must use HTTPS (or http://localhost for local development).' },
  invalid_settings: { status: 400, message: 'Invalid project settings.' },
  invalid_key_type: { status: 400, message: "Invalid keyType. Must be 'publishable' or 'secret'." },
});

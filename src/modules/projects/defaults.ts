/** Settings every new project starts with. */
export const DEFAULT_PROJECT_SETTINGS = {
  isAuthEnabled: true,
  requireEmailVerification: false,
  allowedDomains: ['*'],
};

/**
 * Route groups by authentication. A route module declares once which kind of caller its routes
 * serve (`defineRoutes(kind, register)`); the group registers it in an encapsulated scope that
 * runs the authentication for that kind before the request is validated (a caller without
 * credentials gets 401/403, never a schema error), and sets the OpenAPI security of every route
 * in it. Route files then declare only their schema and call their service. Every route carries
 * `config.auth` (read by test/architecture/route-groups.test.ts: a route registered outside a
 * group fails it).
 */
import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import type { AppContext } from './context.js';
import type { App } from './app.js';
import { apiKeyAuth, requireSecretKey } from './modules/projects/api-key-auth.js';
import { operatorAuth } from './modules/operators/auth.js';
import { requireUser } from './modules/auth/user-auth.js';
import { requireAdmin, requireVerifiedOperator } from './modules/operators/guards.js';
import { projectRoleGuard } from './modules/members/guard.js';
import { permissionOf } from './modules/members/permissions.js';

/**
 * - `public`: no credentials (health, docs, inbound webhooks, OAuth callbacks, signed URLs);
 * - `apiKey`: a project's publishable or secret key (`x-api-key`), the end user's token optional;
 * - `secretKey`: the project's secret key only;
 * - `endUser`: an API key and a valid end-user access token (`req.userId`);
 * - `operator`: a dashboard session; `verifiedOperator`: with a verified email; `admin`: the admin.
 */
export type AuthKind = 'public' | 'apiKey' | 'secretKey' | 'endUser' | 'operator' | 'verifiedOperator' | 'admin';

export interface RouteModule {
  auth: AuthKind;
  register: (app: App, ctx: AppContext) => Promise<void>;
}

type Register = RouteModule['register'];

/** The route files of one kind, registered together (in order) in one encapsulated scope. */
export function defineRoutes(auth: AuthKind, ...registers: Register[]): RouteModule {
  return {
    auth,
    async register(app, ctx) {
      for (const register of registers) await register(app, ctx);
    },
  };
}

type Hook = (req: FastifyRequest) => Promise<void>;

function hooksOf(kind: AuthKind, ctx: AppContext): Hook[] {
  const key = apiKeyAuth(ctx) as Hook;
  const operator = operatorAuth(ctx);
  const hooks: Record<AuthKind, Hook[]> = {
    public: [],
    apiKey: [key],
    secretKey: [key, requireSecretKey],
    endUser: [key, requireUser(ctx)],
    // The operator groups: then the project role the route declares (src/modules/members).
    operator: [operator, projectRoleGuard(ctx)],
    verifiedOperator: [operator, requireVerifiedOperator, projectRoleGuard(ctx)],
    admin: [operator, requireAdmin(ctx)],
  };
  return hooks[kind];
}

const KEY = { apiKey: [] };
const SECURITY: Record<AuthKind, Array<Record<string, string[]>> | undefined> = {
  public: undefined,
  apiKey: [KEY, { apiKey: [], userBearer: [] }],
  secretKey: [KEY],
  endUser: [{ apiKey: [], userBearer: [] }],
  operator: [{ operatorBearer: [] }],
  verifiedOperator: [{ operatorBearer: [] }],
  admin: [{ operatorBearer: [] }],
};

/** Registers the modules of one surface, each inside the scope of its authentication kind. */
export async function registerAuthGroups(app: App, ctx: AppContext, modules: RouteModule[]): Promise<void> {
  const kinds = [...new Set(modules.map((m) => m.auth))];
  for (const kind of kinds) {
    await app.register(async (group) => {
      group.addHook('onRoute', (route) => {
        // Who may call it (src/modules/members/permissions.ts), unless its own options say.
        const method = String([route.method].flat()[0] ?? '');
        const permission = route.config?.permission ?? permissionOf(method, route.url);
        route.config = { ...route.config, auth: kind, ...(permission ? { permission } : {}) };
        const security = SECURITY[kind];
        if (security && route.schema && !route.schema.hide) route.schema = { ...route.schema, security };
      });
      for (const hook of hooksOf(kind, ctx)) group.addHook('preValidation', hook as preValidationHookHandler);
      for (const mod of modules.filter((m) => m.auth === kind)) {
        await group.register(async (scope) => mod.register(scope, ctx));
      }
    });
  }
}

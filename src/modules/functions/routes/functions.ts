/** /api/projects/:projectId/functions: deploy, version, roll back, delete, run and watch a project's functions (docs/functions.md). */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { changeFunction, deleteFunction, deployFunction, functionStats, getFunction, getVersion, listFunctions, listInvocations, rollbackFunction } from '../service.js';
import { runFromConsole } from '../run-service.js';
import {
  ChangeBody,
  CreateBody,
  envelope,
  FunctionParams,
  FunctionView,
  InvocationsQuery,
  InvocationView,
  ProjectParams,
  RollbackBody,
  RunBody,
  RunView,
  StatsView,
  VersionParams,
  VersionView,
} from './schemas.js';

export default async function functionRoutes(app: App, ctx: AppContext): Promise<void> {
  const project = async (req: FastifyRequest) => (await loadMemberProject(ctx, operatorOf(req), (req.params as { projectId: string }).projectId)).id;
  const tags = ['dashboard: functions'];

  app.post(
    '/api/projects/:projectId/functions',
    { schema: { tags, summary: 'Deploy a new function (version 1)', params: ProjectParams, body: CreateBody, response: { 201: envelope(FunctionView) } } },
    async (req, reply) => reply.status(201).send(ok(await deployFunction(ctx, await project(req), req.body), 'Function deployed')),
  );

  app.get(
    '/api/projects/:projectId/functions',
    { schema: { tags, summary: "List a project's functions", params: ProjectParams, response: { 200: envelope(Type.Array(FunctionView)) } } },
    async (req) => ok(await listFunctions(ctx, await project(req)), 'Functions'),
  );

  app.get(
    '/api/projects/:projectId/functions-stats',
    { schema: { tags, summary: 'Invocations, errors, p50 and p99 of each function over the last 24 hours', params: ProjectParams, response: { 200: envelope(Type.Array(StatsView)) } } },
    async (req) => ok(await functionStats(ctx, await project(req)), 'Function statistics'),
  );

  app.get(
    '/api/projects/:projectId/functions/:name',
    {
      schema: {
        tags,
        summary: 'A function with its active source and its versions',
        params: FunctionParams,
        response: { 200: envelope(Type.Intersect([FunctionView, Type.Object({ source: Type.String(), history: Type.Array(VersionView) })])) },
      },
    },
    async (req) => ok(await getFunction(ctx, await project(req), req.params.name), 'Function'),
  );

  app.patch(
    '/api/projects/:projectId/functions/:name',
    { schema: { tags, summary: 'Change a function: a new source is a new version (made active); trigger and enabled change in place', params: FunctionParams, body: ChangeBody, response: { 200: envelope(FunctionView) } } },
    async (req) => ok(await changeFunction(ctx, await project(req), req.params.name, req.body), 'Function updated'),
  );

  app.post(
    '/api/projects/:projectId/functions/:name/rollback',
    { schema: { tags, summary: 'Make an earlier version the active one', params: FunctionParams, body: RollbackBody, response: { 200: envelope(FunctionView) } } },
    async (req) => ok(await rollbackFunction(ctx, await project(req), req.params.name, req.body.version), 'Function rolled back'),
  );

  app.delete(
    '/api/projects/:projectId/functions/:name',
    { schema: { tags, summary: 'Delete a function and all its versions', params: FunctionParams, response: { 200: envelope(Type.Object({ deleted: Type.Boolean() })) } } },
    async (req) => {
      await deleteFunction(ctx, await project(req), req.params.name);
      return ok({ deleted: true }, 'Function deleted');
    },
  );

  app.get(
    '/api/projects/:projectId/functions/:name/versions/:version',
    { schema: { tags, summary: "One version's source", params: VersionParams, response: { 200: envelope(Type.Intersect([VersionView, Type.Object({ source: Type.String() })])) } } },
    async (req) => ok(await getVersion(ctx, await project(req), req.params.name, req.params.version), 'Function version'),
  );

  app.get(
    '/api/projects/:projectId/functions/:name/invocations',
    {
      schema: {
        tags,
        summary: 'Recent invocations with their outcome and logs, newest first (page with `before`)',
        params: FunctionParams,
        querystring: InvocationsQuery,
        response: { 200: envelope(Type.Object({ invocations: Type.Array(InvocationView), nextBefore: Type.Union([Type.String(), Type.Null()]) })) },
      },
    },
    async (req) => ok(await listInvocations(ctx, await project(req), req.params.name, req.query.limit ?? 50, req.query.before), 'Invocations'),
  );

  app.post(
    '/api/projects/:projectId/functions/:name/run',
    {
      schema: {
        tags,
        summary: 'Run the active version with this event (the console\'s "run with this body"); a hook refusing is an answer here, not an error',
        params: FunctionParams,
        body: RunBody,
        response: { 200: envelope(RunView) },
      },
    },
    async (req) => ok(await runFromConsole(ctx, await project(req), req.params.name, req.body.event ?? null, req.body.as ?? 'anonymous'), 'Function run'),
  );
}

/**
 * What a node's context holds of the tus server (server.ts's ResumableUploads), as a type that
 * imports no service: context.ts names it, and server.ts imports the context.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../caller.js';

export interface ResumableUploadsHandle {
  /** Serves one tus request (POST, HEAD, PATCH) for an authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void>;
  urlOf(path: string): string;
  pathOf(segment: string | undefined): string | undefined;
  /** Drops an upload's session (its file was deleted or swept). */
  forget(path: string): Promise<void>;
}

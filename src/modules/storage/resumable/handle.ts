/**
 * What a node's context holds of the tus server (server.ts's ResumableUploads), as a type that
 * imports no service: context.ts names it, and server.ts imports the context.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../caller.js';

export interface ResumableUploadsHandle {
  /** Serves one tus request (POST; HEAD, PATCH of the upload `pathOf` resolved) for an authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, caller: Caller, path?: string): Promise<void>;
  /** The upload URL of an upload path (a fixed-length id, resumable/ids.ts). */
  urlOf(path: string): string;
  /** The path of the upload a URL segment names, if the caller may reach it (else 403/404). */
  pathOf(caller: Caller, segment: string | undefined): Promise<string>;
  /** Drops an upload's session (its file was deleted or swept). */
  forget(path: string): Promise<void>;
}

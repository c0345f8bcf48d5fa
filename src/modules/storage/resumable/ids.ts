/**
 * The upload id of a resumable upload: the last segment of its tus URL (`Location`). It is
 * `<projectId><fileId>` (48 hex characters): it names the upload's `files` row, whatever the
 * length of its name, and stays far below the router's 100-character parameter limit. Clients
 * treat it as opaque. Inside, tus still knows the upload by the file's path (the store's key,
 * upload_sessions.id): the route resolves the id to that path as the caller (service.ts).
 *
 * Ids issued before (the base64url of the path; a name over ~25 bytes made them too long to
 * route) are still read while such uploads are in flight, with the same checks: they never
 * look like a new id (base64 of the path's hex digits starts with M, N or Y).
 */
import { isObjectId } from '../../../lib/ids.js';
import { checkPath, projectOfPath } from '../paths.js';

export type UploadRef = { projectId: string; fileId: string } | { path: string };

const NEW_ID = /^[0-9a-f]{48}$/;
const OLD_ID = /^[A-Za-z0-9_-]{1,600}$/;

/** The upload id of an upload path (an issued path: its project and file id). */
export function uploadIdOf(path: string): string {
  const projectId = projectOfPath(path);
  return projectId + checkPath(projectId, path).fileId;
}

/** What an id names: a project's file, a path (an id issued before), or undefined (no id of ours). */
export function parseUploadId(segment: string | undefined): UploadRef | undefined {
  if (!segment) return undefined;
  if (NEW_ID.test(segment)) {
    const projectId = segment.slice(0, 24);
    const fileId = segment.slice(24);
    return isObjectId(projectId) && isObjectId(fileId) ? { projectId, fileId } : undefined;
  }
  if (!OLD_ID.test(segment)) return undefined;
  const path = Buffer.from(segment, 'base64url').toString();
  try {
    return { path: checkPath(projectOfPath(path), path).path };
  } catch {
    return undefined;
  }
}

/**
 * A project's upload rules (file-settings.ts), applied to both upload flows: the declared type
 * and size when an upload is requested or created, and the type of the bytes themselves (their
 * magic numbers, `file-type`) once they are stored: at upload-confirm, or when a resumable
 * upload's last byte arrives. Bytes of a type the project does not accept are removed and their
 * charge refunded (415 file_type_not_allowed), whatever type the client declared.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { AppContext } from '../../context.js';
import { backendOfFile } from './backends.js';
import { StorageErrors } from './errors.js';
import { fileSettingsOf } from './file-settings.js';
import { normaliseType } from './signing.js';
import type { ProjectRecord } from '../projects/cache.js';
import type { FileRow } from './queries.js';

/** How much of a file's head file-type reads. */
const SNIFF_BYTES = 4100;

export function typeAllowed(allowed: string[], type: string): boolean {
  const t = normaliseType(type).split(';')[0] ?? '';
  return allowed.some((a) => a === t || (a.endsWith('/*') && t.startsWith(a.slice(0, -1))));
}

/** The declared type and size against the project's rules (before anything is stored or charged). */
export function checkDeclared(project: Pick<ProjectRecord, 'settings'>, contentType: string, size: number): void {
  const rules = fileSettingsOf(project);
  if (rules.maxFileBytes !== null && size > rules.maxFileBytes) throw StorageErrors.file_too_large();
  if (rules.allowedTypes && !typeAllowed(rules.allowedTypes, contentType)) throw StorageErrors.file_type_not_allowed();
}

/**
 * Whether the stored bytes are of an accepted type: the type their magic numbers name; a file
 * without one (text has none) is accepted only as a declared `text/*` type the rules allow.
 * True when the project has no type rule or the object is not there yet (the caller decides).
 */
export async function bytesAllowed(ctx: AppContext, project: ProjectRecord, row: FileRow): Promise<boolean> {
  const rules = fileSettingsOf(project);
  if (!rules.allowedTypes) return true;
  const head = await backendOfFile(ctx, project, row.provider)?.readHead(row.path, SNIFF_BYTES);
  if (!head) return true;
  const found = await fileTypeFromBuffer(head);
  if (found) return typeAllowed(rules.allowedTypes, found.mime);
  return normaliseType(row.content_type).startsWith('text/') && typeAllowed(rules.allowedTypes, row.content_type);
}

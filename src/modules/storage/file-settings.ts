/**
 * A project's file rules, in projects.settings.files (docs/storage.md): whether files are
 * private unless set otherwise (`private`), which media types may be uploaded
 * (`allowedTypes`, checked against the bytes' magic numbers) and a largest file below the
 * plan's (`maxFileBytes`). Absent settings: public files, any type, the plan's limit.
 */
import type { ProjectRecord } from '../projects/cache.js';
import type { FileRow } from './queries.js';

export interface FileSettings {
  private: boolean;
  /** Media types (`image/png`) or families (`image/*`); null: any. */
  allowedTypes: string[] | null;
  maxFileBytes: number | null;
  /** Image transformations only on signed URLs (third parties cannot spend the project's renders). */
  signedTransformsOnly: boolean;
}

export function fileSettingsOf(project: Pick<ProjectRecord, 'settings'>): FileSettings {
  const raw = (project.settings.files ?? {}) as Partial<FileSettings>;
  return {
    private: raw.private === true,
    allowedTypes: Array.isArray(raw.allowedTypes) && raw.allowedTypes.length ? raw.allowedTypes.filter((t) => typeof t === 'string') : null,
    maxFileBytes: typeof raw.maxFileBytes === 'number' && raw.maxFileBytes > 0 ? raw.maxFileBytes : null,
    signedTransformsOnly: raw.signedTransformsOnly === true,
  };
}

/** Whether a file is private: its own setting, else the project's default. */
export function isPrivate(project: Pick<ProjectRecord, 'settings'>, row: Pick<FileRow, 'private'>): boolean {
  return row.private ?? fileSettingsOf(project).private;
}

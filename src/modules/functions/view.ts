/** Functions as the dashboard API shows them. Secrets' values never appear in any view. */
import type { FunctionRow, InvocationRow, VersionRow } from './queries.js';

export function functionView(f: FunctionRow & { hash: string; language: 'js' | 'ts'; versions: number }) {
  return {
    id: f.id,
    name: f.name,
    kind: f.kind,
    trigger: f.trigger,
    enabled: f.enabled,
    version: f.active_version,
    versions: Number(f.versions),
    language: f.language,
    hash: f.hash,
    createdAt: f.created_at.toISOString(),
    updatedAt: f.updated_at.toISOString(),
  };
}

export function versionView(v: Pick<VersionRow, 'version' | 'language' | 'hash' | 'created_at'>, active: number) {
  return { version: v.version, language: v.language, hash: v.hash, active: v.version === active, createdAt: v.created_at.toISOString() };
}

export function invocationView(i: InvocationRow) {
  return {
    id: String(i.id),
    version: i.version,
    trigger: i.trigger,
    ok: i.ok,
    errorCode: i.error_code,
    error: i.error,
    durationMs: i.duration_ms,
    cpuMs: i.cpu_ms,
    logs: i.logs,
    logsDropped: i.logs_dropped,
    at: i.at.toISOString(),
  };
}

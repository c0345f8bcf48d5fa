/**
 * Backups: the project's backup schedule and retention, its stored backups (size, counts, status,
 * attempts and error), "Back up now", download, restore over the project (the dialog names
 * what is replaced and asks for the project's name) or into a new project, and delete (the
 * confirmation names the backup; admins only, as the server enforces). Backups, restores,
 * imports and exports that are running show a progress bar (polled every second). The dashboard
 * routes …/backups, …/backups/schedule and …/operations do the work (docs/backup.md).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { bytes, dateTime } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Field, Loadable, PageHead, Select } from '../components/ui';
import { RoleNote } from '../components/ui';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

type Preset = 'off' | 'daily' | 'weekly' | 'custom';
interface Schedule { preset: Preset; cron: string | null; timeZone: 'UTC'; keepDaily: number; keepWeekly: number; isDefault: boolean }
interface Counts { collections: number; documents: number; users: number; files: number }
interface Backup {
  id: string;
  trigger: 'schedule' | 'manual';
  status: 'queued' | 'running' | 'retrying' | 'succeeded' | 'failed';
  attempts: number;
  maxAttempts: number;
  error: { code: string; message: string } | null;
  size: number | null;
  counts: Counts | null;
  storage: 'internal' | 'external' | null;
  createdAt: string;
}
interface Operation {
  id: string;
  kind: 'backup' | 'restore' | 'import' | 'export';
  status: Backup['status'];
  phase: string;
  percent: number;
  attempts: number;
  targetProjectId: string | null;
  error: { code: string; message: string } | null;
  createdAt: string;
}

const KIND: Record<Operation['kind'], string> = { backup: 'Backup', restore: 'Restore', import: 'Import', export: 'Export' };

/** Running operations, each as a labelled progress bar; reloads `onDone` when one finishes. */
function Progress({ base, onDone }: { base: string; onDone: () => void }) {
  const [ops, setOps] = useState<Operation[]>([]);
  useEffect(() => {
    let alive = true;
    let previous = 0;
    const poll = async () => {
      try {
        const list = await api.get<Operation[]>(`${base}/operations?active=true`);
        if (!alive) return;
        setOps(list);
        if (list.length < previous) onDone();
        previous = list.length;
      } catch {
        // next poll
      }
    };
    void poll();
    const t = setInterval(poll, 1000);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, [base]);
  if (!ops.length) return null;
  return (
    <section aria-labelledby="ops-title" class="card">
      <h2 id="ops-title">In progress</h2>
      <ul class="plain">
        {ops.map((o) => (
          <li key={o.id}>
            <label for={`op-${o.id}`}>
              {KIND[o.kind]}: {o.phase}
              {o.status === 'retrying' && o.error ? ` (attempt ${o.attempts} failed: ${o.error.code}; retrying)` : ''} — {Math.round(o.percent)} %
            </label>
            <progress id={`op-${o.id}`} max={100} value={o.percent}>{Math.round(o.percent)} %</progress>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ScheduleForm({ base, schedule, reload }: { base: string; schedule: Schedule; reload: () => void }) {
  const [preset, setPreset] = useState<Preset>(schedule.preset);
  const [cron, setCron] = useState(schedule.preset === 'custom' ? schedule.cron ?? '' : '');
  const [keepDaily, setKeepDaily] = useState(String(schedule.keepDaily));
  const [keepWeekly, setKeepWeekly] = useState(String(schedule.keepWeekly));
  const [busy, setBusy] = useState(false);
  const cannotSchedule = useGate(`PUT /api/projects/:projectId/backups/schedule`);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await api.put(`${base}/backups/schedule`, { preset, ...(preset === 'custom' ? { cron } : {}), keepDaily: Number(keepDaily), keepWeekly: Number(keepWeekly) });
      toast('Backup schedule saved');
      reload();
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="schedule-title">
      <h2 id="schedule-title">Schedule</h2>
      <p class="muted">
        {schedule.isDefault ? "Your plan's default. " : ''}
        {schedule.cron ? <>Runs at <code class="mono">{schedule.cron}</code> (cron, UTC).</> : 'Scheduled backups are off.'}
      </p>
      <Select
        label="Frequency"
        value={preset}
        onChange={(v) => setPreset(v as Preset)}
        options={[{ value: 'off', label: 'Off' }, { value: 'daily', label: 'Daily' }, { value: 'weekly', label: 'Weekly' }, { value: 'custom', label: 'Custom (cron, UTC)' }]}
      />
      {preset === 'custom' && <Field label="Cron expression (UTC)" hint="minute hour day month weekday, e.g. 30 2 * * *" value={cron} onInput={(e) => setCron(e.currentTarget.value)} required />}
      <Field label="Keep daily backups" type="number" inputMode="numeric" value={keepDaily} onInput={(e) => setKeepDaily(e.currentTarget.value)} hint="the newest backup of each of the most recent days" />
      <Field label="Keep weekly backups" type="number" inputMode="numeric" value={keepWeekly} onInput={(e) => setKeepWeekly(e.currentTarget.value)} hint="then the newest of each of the most recent weeks" />
      <div class="actions">
        <button type="submit" class="btn primary" disabled={busy || !!cannotSchedule} title={cannotSchedule}>{busy ? 'Saving…' : 'Save schedule'}</button>
      </div>
    </form>
  );
}

function RestoreDialog({ base, projectName, backup, onClose, onQueued }: { base: string; projectName: string; backup: Backup; onClose: () => void; onQueued: () => void }) {
  const [into, setInto] = useState<'same' | 'new'>('new');
  const [typed, setTyped] = useState('');
  const [name, setName] = useState(`${projectName} (restored ${backup.createdAt.slice(0, 10)})`);
  const [busy, setBusy] = useState(false);
  const current = useLoad((signal) => api.get<Backup & { replaces: { counts: Counts } }>(`${base}/backups/${backup.id}`, signal), [backup.id]);
  const ok = into === 'new' ? name.trim() !== '' : typed === projectName;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!ok) return;
    setBusy(true);
    try {
      await api.post(`${base}/backups/${backup.id}/restore`, into === 'same' ? { into, confirm: typed } : { into, name });
      toast('Restore queued');
      onQueued();
      onClose();
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  };
  const c = current.data?.replaces.counts;
  return (
    <Dialog title={`Restore the backup of ${dateTime(backup.createdAt)}`} onClose={onClose}>
      <form method="dialog" onSubmit={submit}>
        <div class="dialog-body">
          <Select label="Restore into" value={into} onChange={(v) => setInto(v as 'same' | 'new')} options={[{ value: 'new', label: 'A new project (a copy)' }, { value: 'same', label: `This project, replacing its contents` }]} />
          {backup.counts && <p>The backup holds {backup.counts.collections} collections, {backup.counts.documents} documents, {backup.counts.users} users and {backup.counts.files} file records.</p>}
          <p class="muted">
            {into === 'same'
              ? 'A backup holds file records, not file contents: stored files are left as they are now, so a file deleted since the backup comes back as a record without its contents.'
              : "A backup holds file records, not file contents: the new project's files are copied from this project's storage as they are now. Files deleted since the backup, and files in this project's own bucket, are not copied."}
          </p>
          {into === 'same' ? (
            <>
              <p class="status-err" role="alert">
                This replaces everything in “{projectName}”{c ? `: ${c.collections} collections, ${c.documents} documents, ${c.users} users and ${c.files} files` : ''}. Everyone signs in again.
              </p>
              <Field label={`Type “${projectName}” to confirm`} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />
            </>
          ) : (
            <Field label="New project name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
          )}
        </div>
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button type="submit" class={into === 'same' ? 'btn danger' : 'btn primary'} disabled={!ok || busy}>{busy ? 'Working…' : 'Restore'}</button>
        </div>
      </form>
    </Dialog>
  );
}

const STATUS: Record<Backup['status'], string> = { queued: 'Queued', running: 'Running', retrying: 'Retrying', succeeded: 'Stored', failed: 'Failed' };

/** What names a backup to a person: its date, how it was made, and its size. */
const backupName = (b: Backup) => `the ${b.trigger === 'schedule' ? 'scheduled' : 'manual'} backup of ${dateTime(b.createdAt)}${b.size === null ? '' : ` (${bytes(b.size)})`}`;

/** A backup still being written: the server refuses to delete it (409 backup_in_use). */
const writing = (b: Backup) => b.status === 'queued' || b.status === 'running' || b.status === 'retrying';

export default function Backups({ project }: SectionProps) {
  const base = projectPath(project._id);
  const schedule = useLoad((signal) => api.get<Schedule>(`${base}/backups/schedule`, signal), [base]);
  const list = useLoad((signal) => api.get<Backup[]>(`${base}/backups`, signal), [base]);
  const [restoring, setRestoring] = useState<Backup | null>(null);
  const [deleting, setDeleting] = useState<Backup | null>(null);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/backups/:backupId`);
  const [busy, setBusy] = useState(false);
  const cannotRun = useGate(`POST /api/projects/:projectId/backups`);
  const runNow = async () => {
    setBusy(true);
    try {
      await api.post(`${base}/backups`);
      toast('Backup queued');
      list.reload();
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="backups-title" class="backups-screen">
      <PageHead title="Backups">
        <button type="button" class="btn primary" onClick={runNow} disabled={busy || !!cannotRun} title={cannotRun}>{busy ? 'Queuing…' : 'Back up now'}</button>
        <button type="button" class="btn" onClick={list.reload} disabled={list.loading}>Refresh</button>
      </PageHead>
      <h2 id="backups-title" class="sr-only">Backups</h2>
      <RoleNote what="Backing up, restoring, downloading, deleting and scheduling" reason={cannotRun} />
      <p class="muted">Backups are encrypted with a key of this project and stored in its own bucket when it has one, else on this server. Downloads are the archive an export gives. A backup holds the project's file records, not the files' contents.</p>
      <Progress base={base} onDone={list.reload} />
      <Loadable state={schedule}>{(s) => <ScheduleForm key={JSON.stringify(s)} base={base} schedule={s} reload={schedule.reload} />}</Loadable>
      <section aria-labelledby="list-title">
        <h2 id="list-title">Stored backups</h2>
        <Loadable state={list}>
          {(items) =>
            items.length === 0 ? (
              <Empty title="No backups yet">Back up now, or set a schedule.</Empty>
            ) : (
              <div class="table-wrap"><table>
                <caption class="sr-only">Backups, newest first</caption>
                <thead>
                  <tr><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Documents</th><th scope="col">Files</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {items.map((b) => (
                    <tr key={b.id}>
                      <td>{dateTime(b.createdAt)} <span class="muted">({b.trigger === 'schedule' ? 'scheduled' : 'manual'})</span></td>
                      <td>
                        {STATUS[b.status]}
                        {b.error && <span class="status-err"> — {b.error.code} (attempt {b.attempts} of {b.maxAttempts})</span>}
                      </td>
                      <td>{b.size === null ? '—' : bytes(b.size)}</td>
                      <td>{b.counts ? b.counts.documents : '—'}</td>
                      <td>{b.counts ? b.counts.files : '—'}</td>
                      <td>
                        {b.status === 'succeeded' && !cannotRun && (
                          <>
                            <a class="btn" href={`${base}/backups/${b.id}/download`} download aria-label={`Download the backup of ${dateTime(b.createdAt)}`}>Download</a>{' '}
                            <button type="button" class="btn" onClick={() => setRestoring(b)} aria-label={`Restore the backup of ${dateTime(b.createdAt)}`}>Restore</button>{' '}
                          </>
                        )}
                        {!cannotDelete && (
                          <button type="button" class="btn danger" onClick={() => setDeleting(b)} disabled={writing(b)}
                            title={writing(b) ? 'Still being written: delete it once it has finished' : undefined} aria-label={`Delete the backup of ${dateTime(b.createdAt)}`}>Delete</button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table></div>
            )
          }
        </Loadable>
      </section>
      {deleting && (
        <Confirm
          title="Delete this backup?"
          message={<p>Delete {backupName(deleting)}? Its stored copy is removed from {deleting.storage === 'external' ? "the project's own bucket" : 'this server'}, and it can no longer be downloaded or restored. This cannot be undone.</p>}
          action="Delete backup"
          onConfirm={async () => {
            await api.del(`${base}/backups/${deleting.id}`);
            toast('Backup deleted');
            list.reload();
          }}
          onClose={() => setDeleting(null)}
        />
      )}
      {restoring && <RestoreDialog base={base} projectName={project.name} backup={restoring} onClose={() => setRestoring(null)} onQueued={list.reload} />}
    </section>
  );
}

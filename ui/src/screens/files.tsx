/**
 * Files of the project: usage against the quota, upload (the three-step signed-URL flow),
 * list with size and type, image preview, download and delete.
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { bytes, dateTime, plural } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, Meter, PageHead, Pager } from '../components/ui';
import type { SectionProps } from './project-shell';

interface FileItem {
  path: string;
  url: string | null;
  size: number;
  contentType: string;
  createdAt: string;
}
interface Overview {
  used: number;
  limit: number;
  maxFileBytes: number;
  fileCount: number;
}

const LIMIT = 20;
const nameOf = (path: string) => path.split('/').pop()!.replace(/^[0-9a-f]{24}_/, '');

async function upload(projectId: string, file: File): Promise<void> {
  const type = file.type || 'application/octet-stream';
  const req = await api.post<{ signedUrl: string; filePath: string }>(projectPath(projectId, 'files', 'upload-request'), { filename: file.name, contentType: type, size: file.size });
  const put = await fetch(req.signedUrl, { method: 'PUT', headers: { 'content-type': type }, body: file });
  if (!put.ok) throw new Error(`The upload failed (${put.status}).`);
  await api.post(projectPath(projectId, 'files', 'upload-confirm'), { filePath: req.filePath, size: file.size });
}

export default function Files({ project }: SectionProps) {
  const [page, setPage] = useState(1);
  const overview = useLoad((signal) => api.get<Overview>(projectPath(project._id, 'storage'), signal), []);
  const list = useLoad((signal) => api.get<{ items: FileItem[]; total: number }>(`${projectPath(project._id, 'files')}?page=${page}&limit=${LIMIT}`, signal), [page]);
  const [busy, setBusy] = useState(false);
  const [preview, setPreview] = useState<FileItem | null>(null);
  const [deleting, setDeleting] = useState<FileItem | null>(null);
  const refresh = () => { list.reload(); overview.reload(); };
  return (
    <>
      <PageHead title="Files">
        <label class={`btn primary${busy ? ' disabled' : ''}`}>
          {busy ? 'Uploading…' : 'Upload a file'}
          <input type="file" class="sr-only" disabled={busy} onChange={async (e) => {
            const input = e.currentTarget;
            const file = input.files?.[0];
            if (!file) return;
            setBusy(true);
            try {
              await upload(project._id, file);
              toast(`${file.name} uploaded`);
              refresh();
            } catch (err) {
              toastError(err);
            } finally {
              setBusy(false);
              input.value = '';
            }
          }} />
        </label>
      </PageHead>
      <Loadable state={overview}>
        {(o) => (
          <div class="panel-inline">
            <Meter label="Storage" used={o.used} limit={o.limit} format={bytes} />
            <p class="muted">{plural(o.fileCount, 'file')} · at most {bytes(o.maxFileBytes)} per file</p>
          </div>
        )}
      </Loadable>
      <Loadable state={list}>
        {({ items, total }) => items.length === 0 ? <Empty title="No files yet"><p>Upload one here, or through /api/storage from your app.</p></Empty> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Uploaded</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{items.map((f) => (
                <tr key={f.path}>
                  <td class="mono clip" title={f.path}>{nameOf(f.path)}</td>
                  <td>{f.contentType}</td>
                  <td>{bytes(f.size)}</td>
                  <td>{dateTime(f.createdAt)}</td>
                  <td class="row-actions">
                    {f.url && f.contentType.startsWith('image/') && <button type="button" class="btn" onClick={() => setPreview(f)}>Preview</button>}
                    {f.url && <a class="btn" href={f.url} download={nameOf(f.path)} target="_blank" rel="noreferrer">Download</a>}
                    <button type="button" class="btn danger" onClick={() => setDeleting(f)}>Delete</button>
                  </td>
                </tr>
              ))}</tbody>
            </table>
            <Pager status={`${plural(total, 'file')} · page ${page}`} hasPrevious={page > 1} hasNext={page * LIMIT < total}
              onPrevious={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
          </>
        )}
      </Loadable>
      {preview && (
        <Dialog title={nameOf(preview.path)} onClose={() => setPreview(null)} wide>
          <img class="preview" src={preview.url!} alt={`Preview of ${nameOf(preview.path)}`} />
        </Dialog>
      )}
      {deleting && (
        <Confirm title="Delete file?" message={<p><code>{nameOf(deleting.path)}</code> is removed from storage. This cannot be undone.</p>} action="Delete file"
          onConfirm={async () => { await api.del(projectPath(project._id, 'files'), { path: deleting.path }); toast('File deleted'); refresh(); }} onClose={() => setDeleting(null)} />
      )}
    </>
  );
}

/**
 * Files of the project: usage against the quota, upload (the three-step signed-URL flow),
 * list with thumbnails (the image transformation route), size and type, image preview,
 * download, private/public per file and for the project, and delete. Private files (and files
 * whose URL is not Plinth's) are shown through short-lived signed URLs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { bytes, dateTime, plural } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, Meter, PageHead, Pager } from '../components/ui';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

interface FileItem {
  path: string;
  url: string | null;
  private: boolean;
  size: number;
  contentType: string;
  createdAt: string;
}
interface Overview {
  used: number;
  limit: number;
  maxFileBytes: number;
  fileCount: number;
  files: { private: boolean };
}

interface Transform {
  width: number;
  height: number;
  fit: 'cover' | 'inside';
}

const THUMB: Transform = { width: 80, height: 80, fit: 'cover' };

/** An image URL the browser can load: the render route for a public file Plinth serves, else a signed URL. */
async function imageUrl(projectId: string, f: FileItem, transform?: Transform): Promise<string> {
  if (f.url?.includes('/api/storage/public/')) {
    if (!transform) return f.url;
    const q = new URLSearchParams({ width: String(transform.width), height: String(transform.height), fit: transform.fit });
    return `${f.url.replace('/api/storage/public/', '/api/storage/render/')}?${q.toString()}`;
  }
  const body = { path: f.path, ...(transform && { transform: { width: String(transform.width), height: String(transform.height), fit: transform.fit } }) };
  return (await api.post<{ url: string }>(projectPath(projectId, 'files', 'download-url'), body)).url;
}

function Thumb({ projectId, file }: { projectId: string; file: FileItem }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    imageUrl(projectId, file, THUMB).then((u) => live && setSrc(u), () => live && setSrc(null));
    return () => { live = false; };
  }, [file.path, file.private]);
  // An image the transformation route cannot read (damaged, too large) keeps the blank square.
  return src ? <img class="thumb" src={src} alt="" width={40} height={40} loading="lazy" onError={() => setSrc(null)} /> : <span class="thumb" />;
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
  const [previewSrc, setPreviewSrc] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<FileItem | null>(null);
  const openPreview = async (f: FileItem) => {
    try {
      setPreviewSrc(await imageUrl(project._id, f));
      setPreview(f);
    } catch (err) {
      toastError(err);
    }
  };
  const setPrivate = async (f: FileItem, value: boolean) => {
    try {
      await api.patch(projectPath(project._id, 'files'), { path: f.path, private: value });
      toast(`${nameOf(f.path)} is now ${value ? 'private' : 'public'}`);
      list.reload();
    } catch (err) {
      toastError(err);
    }
  };
  const refresh = () => { list.reload(); overview.reload(); };
  const cannotUpload = useGate(`POST /api/projects/:projectId/files/upload-request`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/files`);
  return (
    <>
      <PageHead title="Files">
        <label class={`btn primary${busy || cannotUpload ? ' disabled' : ''}`} title={cannotUpload}>
          {busy ? 'Uploading…' : 'Upload a file'}
          <input type="file" class="sr-only" disabled={busy || !!cannotUpload} onChange={async (e) => {
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
            <label class="check">
              <input type="checkbox" checked={o.files.private} onChange={async (e) => {
                const value = e.currentTarget.checked;
                try {
                  await api.put(projectPath(project._id, 'files', 'settings'), { private: value });
                  toast(value ? 'New files are private' : 'New files are public');
                  refresh();
                } catch (err) {
                  toastError(err);
                }
              }} />
              Files are private unless set otherwise
            </label>
          </div>
        )}
      </Loadable>
      <Loadable state={list}>
        {({ items, total }) => items.length === 0 ? <Empty title="No files yet"><p>Upload one here, or through /api/storage from your app.</p></Empty> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Access</th><th scope="col">Uploaded</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{items.map((f) => (
                <tr key={f.path}>
                  <td class="mono clip" title={f.path}>{f.contentType.startsWith('image/') && <Thumb projectId={project._id} file={f} />}{nameOf(f.path)}</td>
                  <td>{f.contentType}</td>
                  <td>{bytes(f.size)}</td>
                  <td>
                    <label class="check">
                      <input type="checkbox" checked={f.private} onChange={(e) => setPrivate(f, e.currentTarget.checked)} aria-label={`${nameOf(f.path)} is private`} />
                      {f.private ? 'Private' : 'Public'}
                    </label>
                  </td>
                  <td>{dateTime(f.createdAt)}</td>
                  <td class="row-actions">
                    {f.contentType.startsWith('image/') && <button type="button" class="btn" onClick={() => openPreview(f)}>Preview</button>}
                    {f.url && <a class="btn" href={f.url} download={nameOf(f.path)} target="_blank" rel="noreferrer">Download</a>}
                    <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} onClick={() => setDeleting(f)}>Delete</button>
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
        <Dialog title={nameOf(preview.path)} onClose={() => { setPreview(null); setPreviewSrc(null); }} wide>
          {previewSrc && <img class="preview" src={previewSrc} alt={`Preview of ${nameOf(preview.path)}`} />}
        </Dialog>
      )}
      {deleting && (
        <Confirm title="Delete file?" message={<p><code>{nameOf(deleting.path)}</code> is removed from storage. This cannot be undone.</p>} action="Delete file"
          onConfirm={async () => { await api.del(projectPath(project._id, 'files'), { path: deleting.path }); toast('File deleted'); refresh(); }} onClose={() => setDeleting(null)} />
      )}
    </>
  );
}

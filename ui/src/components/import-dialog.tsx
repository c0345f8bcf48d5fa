/** Import a JSON array, NDJSON or CSV file into the collection; shows each refused row. */
import { useState } from 'preact/hooks';
import { request } from '../lib/api';
import { toast } from '../lib/toast';
import { Dialog } from './ui';

interface Result {
  total: number;
  inserted: number;
  failed: number;
  errors: Array<{ row: number; message: string }>;
}

const TYPES: Record<string, string> = { json: 'application/json', ndjson: 'application/x-ndjson', jsonl: 'application/x-ndjson', csv: 'text/csv' };

export function ImportDialog({ base, onClose, onDone }: { base: string; onClose: () => void; onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [result, setResult] = useState<Result>();
  return (
    <Dialog title="Import documents" onClose={onClose} wide>
      <form onSubmit={async (e) => {
        e.preventDefault();
        if (!file) return;
        const ext = file.name.split('.').pop()?.toLowerCase() ?? '';
        const type = Object.hasOwn(TYPES, ext) ? TYPES[ext]! : '';
        if (!type) return setError('Use a .json (array), .ndjson or .csv file.');
        setBusy(true);
        setError(undefined);
        try {
          const r = await request<Result>('POST', `${base}/import`, { raw: { data: await file.text(), type } });
          setResult(r);
          toast(`${r.inserted} of ${r.total} rows imported`, r.failed ? 'error' : 'ok');
          onDone();
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}>
        <div class="field">
          <label for="import-file">File (.json array, .ndjson or .csv with a header row)</label>
          <input id="import-file" type="file" accept=".json,.ndjson,.jsonl,.csv" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </div>
        {error && <p class="form-error" role="alert">{error}</p>}
        {result && (
          <div role="status">
            <p><strong>{result.inserted}</strong> of {result.total} rows imported, {result.failed} refused.</p>
            {result.errors.length > 0 && (
              <table class="grid small">
                <caption class="sr-only">Refused rows</caption>
                <thead><tr><th scope="col">Row</th><th scope="col">Why</th></tr></thead>
                <tbody>{result.errors.map((e) => <tr key={e.row}><td>{e.row}</td><td>{e.message}</td></tr>)}</tbody>
              </table>
            )}
          </div>
        )}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Close</button>
          <button class="btn primary" disabled={!file || busy}>{busy ? 'Importing…' : 'Import'}</button>
        </div>
      </form>
    </Dialog>
  );
}

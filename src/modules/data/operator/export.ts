/**
 * Export of a filtered collection as JSON or NDJSON, streamed: keyset pages of 500 in the
 * default order (newest first; every document has a creation time, so the walk reaches all
 * of them whatever fields they lack), written as they come. Nothing counts the total.
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../../../context.js';
import type { Access } from '../access.js';
import type { CollectionDef } from '../../collections/cache.js';
import type { ListQuery } from '../query.js';
import { listDocuments } from '../read-service.js';

export type ExportFormat = 'json' | 'ndjson';

const PAGE = 500;

type Page = Awaited<ReturnType<typeof listDocuments>>;

async function pageAt(ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery, cursor: string): Promise<Page> {
  return listDocuments(ctx, col, access, { ...q, sort: [], cursor, limit: PAGE, offset: 0, count: false, includeTotal: false });
}

/**
 * The first page is read before anything is sent, so a bad filter is still a clean 400; the
 * rest is read while the client consumes the stream (backpressure: one page at a time).
 */
export async function exportStream(ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery, format: ExportFormat): Promise<Readable> {
  const first = await pageAt(ctx, col, access, q, '');
  async function* lines(): AsyncGenerator<string> {
    let page: Page = first;
    let n = 0;
    if (format === 'json') yield '[';
    for (;;) {
      for (const doc of page.items) {
        const text = JSON.stringify(doc);
        yield format === 'json' ? `${n++ ? ',' : ''}\n${text}` : `${text}\n`;
      }
      if (!('nextCursor' in page) || !page.nextCursor) break;
      page = await pageAt(ctx, col, access, q, page.nextCursor);
    }
    if (format === 'json') yield '\n]\n';
  }
  return Readable.from(lines(), { objectMode: false });
}

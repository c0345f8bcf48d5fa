/** Who asks for a storage operation: a types-only file, so context.ts can name it without a cycle. */
import type { ProjectRecord } from '../projects/cache.js';

export interface Caller {
  project: ProjectRecord;
  keyKind: 'secret' | 'publishable';
  /** The signed-in end user (publishable-key callers); null for the secret key. */
  userId: string | null;
}

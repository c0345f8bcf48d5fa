/**
 * The data set every target of bench/peers.ts gets: 10 000 documents `{title, n, tags, owner}`
 * spread round-robin over 10 owners, `n` uniform in [0, 1000) from a fixed-seed generator, so
 * Parse Server, the limit server and Plinth hold identical values; and the request parameters of
 * the four workloads (the same as the shared suite's: list = owner X, 250 ≤ n < 750, newest
 * first, 20 rows; get rotates over the first 1 000 ids; update sets `n` of a random document).
 */
export const SEED_DOCS = 10_000;
export const OWNERS = Array.from({ length: 10 }, (_, i) => `owner_${i}`);
export const GET_IDS = 1_000;
export const LIST = { nMin: 250, nMax: 750, limit: 20 };
/** Requests per workload the load generator cycles through (random ids, owners, values). */
export const VARIANTS = 500;

const TAGS = ['red', 'green', 'blue', 'alpha', 'beta', 'gamma', 'delta', 'omega'];

export interface BenchDoc {
  title: string;
  n: number;
  tags: string[];
  owner: string;
}

/** mulberry32: a small deterministic generator, so every target is seeded with the same values. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seeded document i (0-based). */
export function seedDoc(i: number): BenchDoc {
  const r = generator(i + 1);
  return {
    title: `seed document ${i}`,
    n: Math.floor(r() * 1000),
    tags: [TAGS[i % TAGS.length]!, TAGS[Math.floor(r() * TAGS.length)]!],
    owner: OWNERS[i % OWNERS.length]!,
  };
}

/** Body of a created document (k: the variant number). */
export function newDoc(k: number): BenchDoc {
  return { title: `new document ${k}`, n: k % 1000, tags: ['new', TAGS[k % TAGS.length]!], owner: OWNERS[k % OWNERS.length]! };
}

export const randomInt = (below: number) => Math.floor(Math.random() * below);
export const pick = <T>(xs: readonly T[]): T => xs[randomInt(xs.length)]!;

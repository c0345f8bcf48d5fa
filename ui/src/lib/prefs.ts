/**
 * What the console remembers per browser (localStorage): saved filters and chosen columns
 * per collection, the theme and the grid density. Never a key, token or document.
 */
export interface SavedFilter {
  name: string;
  query: string;
}

function read<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : fallback;
  } catch {
    return fallback;
  }
}

function write(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: the preference is simply not kept */
  }
}

const filtersKey = (projectId: string, collection: string) => `plinth.filters.${projectId}.${collection}`;
const columnsKey = (projectId: string, collection: string) => `plinth.columns.${projectId}.${collection}`;

export const savedFilters = (p: string, c: string) => read<SavedFilter[]>(filtersKey(p, c), []);
export const setSavedFilters = (p: string, c: string, list: SavedFilter[]) => write(filtersKey(p, c), list);
export const savedColumns = (p: string, c: string) => read<string[] | null>(columnsKey(p, c), null);
export const setSavedColumns = (p: string, c: string, cols: string[]) => write(columnsKey(p, c), cols);

export type ThemeChoice = 'system' | 'light' | 'dark';
export type Density = 'comfortable' | 'compact';
export const THEMES: readonly ThemeChoice[] = ['system', 'light', 'dark'];
export const DENSITIES: readonly Density[] = ['comfortable', 'compact'];

/** A stored choice still among the known ones (an old or hand-edited value is ignored). */
const oneOf = <T extends string>(v: unknown, list: readonly T[], fallback: T): T => (list.includes(v as T) ? (v as T) : fallback);

export const storedTheme = () => oneOf(read<unknown>('plinth.theme', 'system'), THEMES, 'system');
export const setStoredTheme = (t: ThemeChoice) => write('plinth.theme', t);
export const storedDensity = () => oneOf(read<unknown>('plinth.density', 'comfortable'), DENSITIES, 'comfortable');
export const setStoredDensity = (d: Density) => write('plinth.density', d);

/**
 * Theme and grid density. The theme follows the system setting (prefers-color-scheme) unless
 * the operator picks light or dark; both choices are remembered per browser (lib/prefs.ts).
 * They live on <html> as data-theme / data-density, which styles.css reads: data-theme pins
 * color-scheme, so every light-dark() colour (and the browser's own controls) follows.
 * Imported by main.tsx before the first render, so a stored dark theme never flashes light.
 */
import { computed, effect, signal } from '@preact/signals';
import { setStoredDensity, setStoredTheme, storedDensity, storedTheme, type Density, type ThemeChoice } from './prefs';

export const theme = signal<ThemeChoice>(storedTheme());
export const density = signal<Density>(storedDensity());

const query = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
const systemDark = signal(query?.matches ?? false);
query?.addEventListener('change', (e) => (systemDark.value = e.matches));

/** Whether the console is dark now (the JSON editor, drawn by CodeMirror, asks). */
export const isDark = computed(() => theme.value === 'dark' || (theme.value === 'system' && systemDark.value));

export function setTheme(t: ThemeChoice): void {
  theme.value = t;
  setStoredTheme(t);
}

export function setDensity(d: Density): void {
  density.value = d;
  setStoredDensity(d);
}

// Another tab of the console changed a choice: follow it.
window.addEventListener('storage', (e) => {
  if (e.key === 'plinth.theme') theme.value = storedTheme();
  if (e.key === 'plinth.density') density.value = storedDensity();
});

effect(() => {
  const root = document.documentElement;
  if (theme.value === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme.value;
  if (density.value === 'compact') root.dataset.density = 'compact';
  else delete root.dataset.density;
});

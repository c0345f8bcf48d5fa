/**
 * The top bar's "Display" menu: theme (system, light, dark) and grid density (comfortable,
 * compact), applied at once and remembered per browser (lib/theme.ts).
 */
import { useEffect, useRef } from 'preact/hooks';
import { DENSITIES, THEMES, type Density, type ThemeChoice } from '../lib/prefs';
import { density, setDensity, setTheme, theme } from '../lib/theme';

const THEME_LABELS: Record<ThemeChoice, string> = { system: 'System setting', light: 'Light', dark: 'Dark' };
const DENSITY_LABELS: Record<Density, string> = { comfortable: 'Comfortable', compact: 'Compact' };

export function DisplayMenu() {
  const menu = useRef<HTMLDetailsElement>(null);
  // Escape or a click elsewhere closes it, as a menu should.
  useEffect(() => {
    const close = (e: Event) => {
      const el = menu.current;
      if (!el?.open) return;
      if (e instanceof KeyboardEvent ? e.key === 'Escape' : !el.contains(e.target as Node)) {
        el.open = false;
        if (e instanceof KeyboardEvent) el.querySelector('summary')?.focus();
      }
    };
    document.addEventListener('click', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('click', close);
      document.removeEventListener('keydown', close);
    };
  }, []);
  return (
    <details class="display-menu" ref={menu}>
      <summary class="btn ghost">Display <span aria-hidden="true">▾</span></summary>
      <div class="menu-pop">
        <fieldset>
          <legend>Theme</legend>
          {THEMES.map((t) => (
            <label class="check" key={t}>
              <input type="radio" name="plinth-theme" value={t} checked={theme.value === t} onChange={() => setTheme(t)} /> {THEME_LABELS[t]}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Grid density</legend>
          {DENSITIES.map((d) => (
            <label class="check" key={d}>
              <input type="radio" name="plinth-density" value={d} checked={density.value === d} onChange={() => setDensity(d)} /> {DENSITY_LABELS[d]}
            </label>
          ))}
        </fieldset>
      </div>
    </details>
  );
}

/**
 * The console's role gating (docs/teams.md "The console") uses the server's own permission
 * table (ui/src/lib/permissions.ts imports src/modules/members/permissions.ts): every route a
 * console control names must be a project route of that table, and the console's role order
 * must be the server's, so a control is never offered to a role the server refuses (or hidden
 * from one it allows).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../src/modules/members/permissions.js';
import { ROLES } from '../../src/modules/members/roles.js';
import { gate, leastRole } from '../../ui/src/lib/permissions.js';
import { can } from '../../ui/src/lib/roles.js';

const UI = fileURLToPath(new URL('../../ui/src', import.meta.url));
const sources = readdirSync(UI, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
  .map((e) => ({ file: join(e.parentPath, e.name), text: readFileSync(join(e.parentPath, e.name), 'utf8') }));
const named = sources.flatMap(({ file, text }) => [...text.matchAll(/\b(?:useGate|gate|allowed|leastRole)\(\s*(?:[\w.]+,\s*)?[`'"]([A-Z]+ [^`'"]+)[`'"]/g)].map((m) => ({ file, route: m[1]! })));

describe('console role gating', () => {
  it('names routes of the server table, on at least the screens with write controls', () => {
    expect(named.length).toBeGreaterThan(20);
    const unknown = named.filter(({ route }) => !PERMISSIONS[route] || !('role' in PERMISSIONS[route]!));
    expect(unknown).toEqual([]);
    const screens = new Set(named.map(({ file }) => file.split('/').pop()));
    for (const s of ['functions.tsx', 'records.tsx', 'users.tsx', 'files.tsx', 'mail.tsx', 'webhooks.tsx', 'rules-editor.tsx', 'backups.tsx', 'ai.tsx']) expect(screens, s).toContain(s);
  });

  it('answers as the server table does for every project route and role', () => {
    for (const [route, d] of Object.entries(PERMISSIONS)) {
      if (!('role' in d)) continue;
      expect(leastRole(route)).toBe(d.role);
      for (const role of ROLES) expect(gate(role, route) === undefined, `${role} ${route}`).toBe(ROLES.indexOf(role) >= ROLES.indexOf(d.role));
    }
    for (const a of ROLES) for (const b of ROLES) expect(can(a, b)).toBe(ROLES.indexOf(a) >= ROLES.indexOf(b));
    expect(gate('viewer', 'POST /api/projects/:projectId/functions')).toBe('Needs the developer role or higher; your role is viewer.');
  });

  it('refuses a route the table does not have (a typo fails loudly, not silently open)', () => {
    expect(() => leastRole('POST /api/projects/:projectId/functionz')).toThrow(/no project permission/);
  });
});

/** One project: its navigation (sections, collections) and the section the route names. */
import { api, projectPath } from '../lib/api';
import { href } from '../lib/router';
import type { Collection, Project } from '../lib/types';
import { useLoad } from '../lib/use-load';
import { lazy } from '../components/lazy';
import { Loadable } from '../components/ui';
import { ProjectRole } from '../lib/permissions';

export interface SectionProps {
  project: Project;
  collections: Collection[];
  rest: string[];
  reload: () => void;
}

const SECTIONS = {
  collections: lazy<SectionProps>(() => import('./collections')),
  data: lazy<SectionProps>(() => import('./records')),
  users: lazy<SectionProps>(() => import('./users')),
  files: lazy<SectionProps>(() => import('./files')),
  mail: lazy<SectionProps>(() => import('./mail')),
  webhooks: lazy<SectionProps>(() => import('./webhooks')),
  functions: lazy<SectionProps>(() => import('./functions')),
  logs: lazy<SectionProps>(() => import('./logs')),
  database: lazy<SectionProps>(() => import('./database')),
  audit: lazy<SectionProps>(() => import('./audit')),
  members: lazy<SectionProps>(() => import('./members')),
  backups: lazy<SectionProps>(() => import('./backups')),
  ai: lazy<SectionProps>(() => import('./ai')),
  usage: lazy<SectionProps>(() => import('./usage')),
  settings: lazy<SectionProps>(() => import('./settings')),
} as const;

const NAV: Array<[keyof typeof SECTIONS, string]> = [
  ['collections', 'Collections'],
  ['users', 'Users'],
  ['files', 'Files'],
  ['mail', 'Mail'],
  ['webhooks', 'Webhooks'],
  ['functions', 'Functions'],
  ['logs', 'Request log'],
  ['database', 'Database'],
  ['audit', 'Audit log'],
  ['members', 'Members'],
  ['backups', 'Backups'],
  ['ai', 'AI'],
  ['usage', 'Usage'],
  ['settings', 'Settings'],
];

export default function ProjectShell({ projectId, section, rest }: { projectId: string; section: string; rest: string[] }) {
  const state = useLoad(async (signal) => {
    const [project, collections] = await Promise.all([
      api.get<Project>(projectPath(projectId), signal),
      api.get<Collection[]>(projectPath(projectId, 'collections'), signal),
    ]);
    return { project, collections };
  }, [projectId]);
  const key = (Object.hasOwn(SECTIONS, section) ? section : 'collections') as keyof typeof SECTIONS;
  const Section = SECTIONS[key];
  const current = key === 'data' ? rest[0] : undefined;
  return (
    <div class="layout">
      <nav class="sidebar" aria-label="Project">
        <Loadable state={state}>
          {({ project, collections }) => (
            <>
              <p class="sidebar-title" title={project.name}>{project.name}</p>
              {project.role && <p class="muted small">Your role: {project.role}</p>}
              <ul>
                {NAV.map(([s, label]) => (
                  <li key={s}>
                    <a href={href('p', projectId, s)} aria-current={key === s ? 'page' : undefined}>{label}</a>
                  </li>
                ))}
              </ul>
              <p class="sidebar-sub">Data</p>
              <ul>
                {collections.length === 0 && <li class="muted small">No collections</li>}
                {collections.map((c) => (
                  <li key={c._id}>
                    {/* The users collection is served by the end-user API: its screen is Users. */}
                    <a href={c.name.toLowerCase() === 'users' ? href('p', projectId, 'users') : href('p', projectId, 'data', c.name)} aria-current={current === c.name ? 'page' : undefined} title={c.name}>{c.name}</a>
                  </li>
                ))}
              </ul>
            </>
          )}
        </Loadable>
      </nav>
      <main id="main" tabIndex={-1} class="page">
        <Loadable state={state}>
          {({ project, collections }) => <ProjectRole.Provider value={project.role}><Section project={project} collections={collections} rest={rest} reload={state.reload} /></ProjectRole.Provider>}
        </Loadable>
      </main>
    </div>
  );
}

/**
 * The shell: who is signed in, which screen the hash names, the navigation. Screens other
 * than sign-in and the project list are loaded on demand.
 */
import { useEffect } from 'preact/hooks';
import { effect } from '@preact/signals';
import { sessionExpired } from './lib/api';
import { href, navigate, route } from './lib/router';
import { loadMe, logout, me } from './lib/session';
import { lazy } from './components/lazy';
import { SkipLink, Spinner, Toasts } from './components/ui';
import { DisplayMenu } from './components/display-menu';
import { Forgot, Login, Register, Reset, Verify } from './screens/auth';
import { Projects } from './screens/projects';

const ProjectShell = lazy(() => import('./screens/project-shell'));
const Account = lazy(() => import('./screens/account'));
const Admin = lazy(() => import('./screens/admin'));
const Invitation = lazy<{ token: string }>(() => import('./screens/invitation'));

effect(() => {
  if (sessionExpired.value > 0) me.value = null;
});

const AUTH = { login: Login, register: Register, verify: Verify, forgot: Forgot, reset: Reset } as const;

function TopBar() {
  const user = me.value!;
  return (
    <header class="topbar">
      <a class="brand" href="#/projects">Plinth</a>
      <nav aria-label="Account" class="topnav">
        <a href="#/projects" aria-current={route.value.path[0] === 'projects' || route.value.path.length === 0 ? 'page' : undefined}>Projects</a>
        <a href="#/account" aria-current={route.value.path[0] === 'account' ? 'page' : undefined}>Account</a>
        {user.isAdmin && <a href="#/admin" aria-current={route.value.path[0] === 'admin' ? 'page' : undefined}>Admin</a>}
        <span class="who" title={user.email}>{user.email}</span>
        <DisplayMenu />
        <button type="button" class="btn ghost" onClick={async () => { await logout(); navigate(href('login')); }}>Sign out</button>
      </nav>
    </header>
  );
}

function Screen() {
  const [first = 'projects', ...rest] = route.value.path;
  if (first === 'p' && rest[0]) return <ProjectShell projectId={rest[0]} section={rest[1] ?? 'collections'} rest={rest.slice(2)} />;
  if (first === 'account') return <Account />;
  if (first === 'invitations') return <Invitation token={rest[0] ?? ''} />;
  if (first === 'admin') return <Admin />;
  return <Projects />;
}

export function App() {
  useEffect(() => void loadMe(), []);
  const user = me.value;
  const [first] = route.value.path;
  if (user === undefined) return <Spinner label="Starting the console…" />;
  if (user === null) {
    // An invitation link shows what it invites to before signing in.
    if (first === 'invitations') return (<><SkipLink /><Invitation token={route.value.path[1] ?? ''} /><Toasts /></>);
    const Auth = first && Object.hasOwn(AUTH, first) ? AUTH[first as keyof typeof AUTH] : Login;
    return (
      <>
        <SkipLink />
        <Auth />
        <Toasts />
      </>
    );
  }
  if (first && Object.hasOwn(AUTH, first)) navigate('#/projects', true);
  return (
    <>
      <SkipLink />
      <TopBar />
      <Screen />
      <Toasts />
    </>
  );
}

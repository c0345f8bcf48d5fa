/** Platform administration (the ADMIN_EMAIL operator): operators and their plans, the plan table. */
import { api } from '../lib/api';
import { bytes, dateTime } from '../lib/format';
import { me } from '../lib/session';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Empty, Loadable, PageHead } from '../components/ui';

interface Op { _id: string; email: string; name: string | null; plan: string; isVerified: boolean; isAdmin: boolean; projectsCount: number; createdAt: string }
type Plans = Record<string, Record<string, number | boolean>>;

const show = (k: string, v: number | boolean) => (typeof v === 'boolean' ? (v ? 'yes' : 'no') : v < 0 ? 'unlimited' : /Bytes$/.test(k) ? bytes(v) : v.toLocaleString());

export default function Admin() {
  const ops = useLoad((s) => api.get<Op[]>('/api/admin/operators', s), []);
  const plans = useLoad((s) => api.get<Plans>('/api/admin/plans', s), []);
  if (!me.value?.isAdmin) return <main id="main" tabIndex={-1} class="page"><Empty title="Administrators only" /></main>;
  return (
    <main id="main" tabIndex={-1} class="page">
      <PageHead title="Admin" />
      <h2>Operators</h2>
      <Loadable state={ops}>
        {(list) => (
          <table class="grid">
            <thead><tr><th scope="col">Email</th><th scope="col">Projects</th><th scope="col">Verified</th><th scope="col">Since</th><th scope="col">Plan</th></tr></thead>
            <tbody>{list.map((o) => (
              <tr key={o._id}><td>{o.email}{o.isAdmin ? ' (admin)' : ''}</td><td>{o.projectsCount}</td><td>{o.isVerified ? 'yes' : 'no'}</td><td>{dateTime(o.createdAt)}</td>
                <td>
                  <label class="sr-only" for={`plan-${o._id}`}>Plan of {o.email}</label>
                  <select id={`plan-${o._id}`} value={o.plan} onChange={async (e) => {
                    const plan = e.currentTarget.value;
                    try {
                      await api.patch(`/api/admin/operators/${o._id}/plan`, { plan });
                      toast(`${o.email} is now on ${plan}`);
                      ops.reload();
                    } catch (err) {
                      toastError(err);
                    }
                  }}>
                    <option value="free">free</option>
                    <option value="pro">pro</option>
                  </select>
                </td></tr>
            ))}</tbody>
          </table>
        )}
      </Loadable>
      <h2>Plans</h2>
      <Loadable state={plans}>
        {(p) => {
          const names = Object.keys(p);
          const keys = Object.keys(p[names[0]!] ?? {});
          return (
            <table class="grid">
              <thead><tr><th scope="col">Limit</th>{names.map((n) => <th scope="col">{n}</th>)}</tr></thead>
              <tbody>{keys.map((k) => <tr key={k}><th scope="row">{k}</th>{names.map((n) => <td>{show(k, p[n]![k]!)}</td>)}</tr>)}</tbody>
            </table>
          );
        }}
      </Loadable>
    </main>
  );
}

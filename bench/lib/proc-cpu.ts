/**
 * CPU time of processes from /proc (Linux): a server's own process, and a PostgreSQL cluster
 * (its postmaster and every backend it forked), so a benchmark can report CPU per request.
 * Elsewhere it answers null and the figure is left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** utime + stime of one process in µs (fields 14 and 15 of /proc/<pid>/stat), null if unreadable. */
export function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 on
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return null;
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** utime + stime + cutime + cstime: with the CPU of the children it has reaped. */
function withReapedChildrenUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_US;
  } catch {
    return null;
  }
}

/**
 * The CPU of a cluster: its postmaster (first line of postmaster.pid), the backends it has
 * reaped (counted in its cutime/cstime, so a backend that exits mid-window is not lost) and
 * the ones still running.
 */
export function clusterCpuUs(clusterDir: string): number | null {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  let total = withReapedChildrenUs(postmaster) ?? 0;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && parentOf(pid) === postmaster) total += processCpuUs(pid) ?? 0;
  }
  return total;
}

import type { LoadRequest } from '../lib/load.js';

export type Workload = 'create' | 'list' | 'get' | 'update';
export const WORKLOADS: Workload[] = ['create', 'list', 'get', 'update'];

/** One server measured by bench/peers.ts. */
export interface Target {
  name: string;
  url: string;
  /** The server's process, for its CPU time. */
  pid: number;
  /** Seeds the data set (bench/peers/dataset.ts); called once, before any load. */
  prepare(): Promise<void>;
  /** The requests of one workload, which the load generator cycles through. */
  requests(workload: Workload): LoadRequest[];
}

/**
 * Plans: every limit in one table. An operator's plan applies to all their projects.
 * -1 means unlimited.
 */
export type PlanName = 'free' | 'pro';

export interface Plan {
  projectsPerOperator: number;
  collectionsPerProject: number;
  databaseBytes: number;
  storageBytes: number;
  maxFileBytes: number;
  mailPerMonthSharedKey: number;
  mailPerMonthOwnKey: number;
  aiSessionsPerMonth: number;
  personalAiKey: boolean;
  customMailTemplates: boolean;
  broadcasts: boolean;
  publicRequestsPerMinute: number;
}

const MB = 1024 * 1024;

export const PLANS: Record<PlanName, Plan> = {
  free: {
    projectsPerOperator: 3,
    collectionsPerProject: 20,
    databaseBytes: 50 * MB,
    storageBytes: 20 * MB,
    maxFileBytes: 10 * MB,
    mailPerMonthSharedKey: 100,
    mailPerMonthOwnKey: 50_000,
    aiSessionsPerMonth: 5,
    personalAiKey: true,
    customMailTemplates: true,
    broadcasts: false,
    publicRequestsPerMinute: 600,
  },
  pro: {
    projectsPerOperator: 20,
    collectionsPerProject: 200,
    databaseBytes: 5 * 1024 * MB,
    storageBytes: 1024 * MB,
    maxFileBytes: 10 * MB,
    mailPerMonthSharedKey: 5_000,
    mailPerMonthOwnKey: 50_000,
    aiSessionsPerMonth: 20,
    personalAiKey: true,
    customMailTemplates: true,
    broadcasts: true,
    publicRequestsPerMinute: 6_000,
  },
};

export function planOf(name: string): Plan {
  return PLANS[name === 'pro' ? 'pro' : 'free'];
}

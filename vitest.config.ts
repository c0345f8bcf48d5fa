import { defineConfig } from 'vitest/config';

/**
 * A file that measures its own heap (forced collections, heap samples) runs in a
 * fresh worker thread of its own: its heap holds none of the modules and apps the earlier
 * files of a shared worker left, and its forced collections slow no other file.
 */
const OWN_HEAP = ['test/modules/backup/scheduled-backups.memory.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker keeps its module cache from one test file to the next. Importing the app
    // (test/helpers/context.ts pulls in every route) costs a file ~2.7 s of CPU in a fresh
    // module graph; isolation between files comes from elsewhere: each file gets its own
    // database, AppContext, app and clock (createTestEnv), and no test mocks a module.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false }, threads: { maxThreads: 2, minThreads: 1, isolate: true } },
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: OWN_HEAP, isolate: false } },
      { extends: true, test: { name: 'own-heap', include: OWN_HEAP, pool: 'threads', isolate: true } },
    ],
  },
});

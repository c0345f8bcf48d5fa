/** Storage's lifecycle hooks (project deletion removes the project's files). */
import type { AppContext } from '../../context.js';

export function registerStorageHooks(_ctx: AppContext): void {}

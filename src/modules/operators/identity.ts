/** The signed-in operator as the request carries it: a types-only file (auth.ts, mfa.ts and service.ts all name it). */
import type { Aal, AmrEntry } from '../../lib/identity/assurance.js';
import type { PlanName } from '../plans/plans.js';

export interface OperatorIdentity {
  id: string;
  email: string;
  name: string | null;
  plan: PlanName;
  isVerified: boolean;
  isAdmin: boolean;
  /** The session's assurance, and whether the operator has a second factor (docs/operators-and-projects.md). */
  aal: Aal;
  /** The methods the session was verified with (the token's `amr`), carried over by change-password. */
  amr: AmrEntry[];
  hasSecondFactor: boolean;
  /** The session (refresh family) of the request's token; null for a token issued before tokens named it. */
  sessionId?: string | null;
  /** When the request's access token expires (epoch seconds): a console stream ends then, as an end user's does. */
  tokenExp?: number;
}

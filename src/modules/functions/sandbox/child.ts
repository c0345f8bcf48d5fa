/**
 * Entry of a sandbox process (`dist/sandbox.js`), forked by pool.ts with an empty environment:
 * it holds no secret, no database connection and no listening socket. It runs one invocation at
 * a time per unit instance (several of one project's at once, engine.ts) and asks the parent for
 * everything outside the guest (data, mail, fetch) by message.
 */
import { Engine } from './engine.js';
import type { FromSandbox, InvokeMessage, ToSandbox } from './protocol.js';

const engine = new Engine();
/** Host calls awaiting the parent's answer, by call number, with the invocation that made each. */
const waiting = new Map<number, { id: number; resolve: (body: string) => void }>();
let nextCall = 1;
let done = 0;
const RSS_EVERY = 8;

function send(msg: FromSandbox): void {
  process.send?.(msg);
}

async function invoke(msg: InvokeMessage): Promise<void> {
  const outcome = await engine.run(msg, {
    call(name, args) {
      const call = nextCall++;
      return new Promise<string>((resolve) => {
        waiting.set(call, { id: msg.id, resolve });
        send({ t: 'host-call', id: msg.id, call, name, args });
      });
    },
  });
  // Calls still unanswered when the invocation ended are forgotten; other invocations' stay.
  for (const [call, w] of waiting) if (w.id === msg.id) waiting.delete(call);
  if (outcome === 'need-source') send({ t: 'need-source', id: msg.id });
  else {
    // The resident size (read from /proc) after every RSS_EVERY-th invocation and after any
    // failure, when the pool decides whether to replace this process.
    done += 1;
    const rss = outcome.failure || done % RSS_EVERY === 0 ? process.memoryUsage.rss() : 0;
    send({ t: 'done', id: msg.id, ...outcome, rss });
  }
}

process.on('message', (msg: ToSandbox) => {
  if (msg.t === 'invoke') void invoke(msg);
  else if (msg.t === 'host-result') {
    const w = waiting.get(msg.call);
    if (!w || w.id !== msg.id) return;
    waiting.delete(msg.call);
    w.resolve(msg.body);
  }
});
// The parent gone means this process has nothing left to do.
process.on('disconnect', () => process.exit(0));
send({ t: 'ready' });

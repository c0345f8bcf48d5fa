/**
 * Entry of a sandbox process (`dist/sandbox.js`), forked by pool.ts with an empty environment:
 * it holds no secret, no database connection and no listening socket. It runs one invocation at
 * a time and asks the parent for everything outside the guest (data, mail, fetch) by message.
 */
import { Engine } from './engine.js';
import type { FromSandbox, InvokeMessage, ToSandbox } from './protocol.js';

const engine = new Engine();
const waiting = new Map<number, (body: string) => void>();
let nextCall = 1;

function send(msg: FromSandbox): void {
  process.send?.(msg);
}

async function invoke(msg: InvokeMessage): Promise<void> {
  const outcome = await engine.run(msg, {
    call(name, args) {
      const call = nextCall++;
      return new Promise<string>((resolve) => {
        waiting.set(call, resolve);
        send({ t: 'host-call', id: msg.id, call, name, args });
      });
    },
  });
  waiting.clear();
  if (outcome === 'need-source') send({ t: 'need-source', id: msg.id });
  else send({ t: 'done', id: msg.id, ...outcome, rss: process.memoryUsage.rss() });
}

process.on('message', (msg: ToSandbox) => {
  if (msg.t === 'invoke') void invoke(msg);
  else if (msg.t === 'host-result') {
    const resolve = waiting.get(msg.call);
    waiting.delete(msg.call);
    resolve?.(msg.body);
  }
});
// The parent gone means this process has nothing left to do.
process.on('disconnect', () => process.exit(0));
send({ t: 'ready' });

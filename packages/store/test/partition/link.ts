// A network link between a worker and Postgres that a test can cut. Where the machine allows it
// (root, iproute2), the worker runs in a network namespace of its own, with its own address,
// reaching Postgres over a veth pair through a forwarder on the host side: cutting the link sets
// the host end down, so packets are dropped and the worker's connections hang, as in a real
// partition. Elsewhere the forwarder itself (on 127.0.0.1) stops passing bytes, and `why` says
// what failed.

import { execFileSync } from 'node:child_process';
import { createServer, type Server, type Socket, connect } from 'node:net';

export interface Link {
  readonly mode: 'netns' | 'forwarder';
  /** Why network namespaces were not used (forwarder mode only). */
  readonly why: string | null;
  /** The Postgres URL as the worker on the far side sees it. */
  readonly url: string;
  /** The command prefix that runs a program on the far side (empty: this host). */
  readonly prefix: readonly string[];
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });

/** A TCP forwarder to `target`; `hold` stops it passing bytes (both ways) until released. */
function forwarder(listenHost: string, target: { host: string; port: number }) {
  let held = false;
  const pairs = new Set<[Socket, Socket]>();
  const waiting: (() => void)[] = [];
  const server: Server = createServer((client) => {
    const open = (): void => {
      const upstream = connect(target.port, target.host);
      const pair: [Socket, Socket] = [client, upstream];
      pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const end = (): void => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    };
    if (held) waiting.push(open);
    else open();
  });
  return {
    server,
    listen: () =>
      new Promise<number>((resolve) => server.listen(0, listenHost, () => resolve((server.address() as { port: number }).port))),
    hold(on: boolean): void {
      held = on;
      for (const [a, b] of pairs) for (const s of [a, b]) on ? s.pause() : s.resume();
      if (!on) for (const open of waiting.splice(0)) open();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) a.destroy(), b.destroy();
        server.close(() => resolve());
      }),
  };
}

function tryNamespace(name: string, host: string, far: string): string | null {
  if (process.getuid?.() !== 0) return 'this process is not root (creating a network namespace needs CAP_NET_ADMIN)';
  try {
    ip('netns', 'add', name);
    ip('link', 'add', `${name}h`, 'type', 'veth', 'peer', 'name', `${name}w`);
    ip('link', 'set', `${name}w`, 'netns', name);
    ip('addr', 'add', `${host}/30`, 'dev', `${name}h`);
    ip('link', 'set', `${name}h`, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${far}/30`, 'dev', `${name}w`);
    ip('netns', 'exec', name, 'ip', 'link', 'set', `${name}w`, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
    return null;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8').trim();
    removeNamespace(name);
    return `ip netns/veth failed: ${stderr || (error instanceof Error ? error.message : String(error))}`;
  }
}

function removeNamespace(name: string): void {
  for (const args of [
    ['link', 'del', `${name}h`],
    ['netns', 'del', name],
  ]) {
    try {
      ip(...args);
    } catch {
      // already gone
    }
  }
}

/** Opens a link to the Postgres of `postgresUrl`; `id` keeps names apart (interface names take 15 characters). */
export async function openLink(postgresUrl: string, id: number): Promise<Link> {
  const target = new URL(postgresUrl);
  const name = `tkp${id % 100_000}`;
  const octet = 4 * (id % 60);
  const host = `10.231.77.${octet + 1}`;
  const far = `10.231.77.${octet + 2}`;
  const why = tryNamespace(name, host, far);
  const fwd = forwarder(why === null ? host : '127.0.0.1', { host: target.hostname, port: Number(target.port || 5432) });
  const port = await fwd.listen();
  const url = new URL(postgresUrl);
  url.hostname = why === null ? host : '127.0.0.1';
  url.port = String(port);
  const netns = why === null;
  return {
    mode: netns ? 'netns' : 'forwarder',
    why,
    url: url.toString(),
    prefix: netns ? ['ip', 'netns', 'exec', name] : [],
    cut: () => (netns ? ip('link', 'set', `${name}h`, 'down') : fwd.hold(true)),
    restore: () => (netns ? ip('link', 'set', `${name}h`, 'up') : fwd.hold(false)),
    async close() {
      await fwd.close();
      if (netns) removeNamespace(name);
    },
  };
}

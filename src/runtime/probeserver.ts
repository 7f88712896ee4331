// The HTTP endpoints a kubelet and Prometheus read: /healthz (the process serves), /readyz (caches
// synced), and /metrics once a registry is attached.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProbeServerOptions {
  /** `host:port`; port 0 picks a free one. */
  address: string;
  ready: () => boolean;
  /** Prometheus text exposition, if metrics are served here. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

export class ProbeServer {
  private server: Server | undefined;

  constructor(private readonly options: ProbeServerOptions) {}

  async start(): Promise<AddressInfo> {
    const [host, port] = splitAddress(this.options.address);
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const reply = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
        res.writeHead(code, { 'Content-Type': type }).end(body);
      };
      if (path === '/healthz') return reply(200, 'ok\n');
      if (path === '/readyz') return this.options.ready() ? reply(200, 'ok\n') : reply(503, 'caches not synced\n');
      if (path === '/metrics' && this.options.metrics) {
        this.options.metrics().then((m) => reply(200, m.body, m.contentType), (err: unknown) => reply(500, `${String(err)}\n`));
        return;
      }
      reply(404, 'not found\n');
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    return server.address() as AddressInfo;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  }
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  const host = i > 0 ? address.slice(0, i) : '0.0.0.0';
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid listen address "${address}"`);
  return [host.replace(/^\[|\]$/g, ''), port];
}

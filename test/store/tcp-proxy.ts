/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL, to lose the database while the store runs:
 * `cut()` drops every connection and refuses new ones until `restore()`; `cutWhen()` drops them
 * when the client sends bytes containing a marker (in the middle of a transaction, say),
 * before those bytes reach the server.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly #target: { host: string; port: number };
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #cut = false;
  #marker: string | undefined;
  #markerSeen: (() => void) | undefined;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = createServer((client) => this.#accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy is not listening');
    return address.port;
  }

  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  restore(): void {
    this.#cut = false;
  }

  /** Resolves once a client sent `marker`; its bytes never reached the server and all is cut. */
  cutWhen(marker: string): Promise<void> {
    this.#marker = marker;
    return new Promise((resolve) => {
      this.#markerSeen = resolve;
    });
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    if (this.#cut) {
      client.destroy();
      return;
    }
    const server = connect(this.#target.port, this.#target.host);
    this.#sockets.add(client).add(server);
    const forget = () => {
      client.destroy();
      server.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(server);
    };
    client.on('error', forget).on('close', forget);
    server.on('error', forget).on('close', forget);
    client.on('data', (chunk: Buffer) => {
      if (this.#marker !== undefined && chunk.toString('latin1').includes(this.#marker)) {
        this.#marker = undefined;
        this.cut();
        this.#markerSeen?.();
        return;
      }
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => client.write(chunk));
  }
}

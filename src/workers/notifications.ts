import type { Pool, PoolClient } from '../db/pool.js';

/**
 * One connection LISTENing for the channels workers wake on (new messages, new events).
 * Notifications only shorten the wait: every loop also polls, so a lost connection costs
 * latency, never mail. On error the connection is replaced after a short pause.
 */
export class Notifications {
  private client: PoolClient | null = null;
  private stopped = false;
  private readonly handlers = new Map<string, (() => void)[]>();

  constructor(private readonly pool: Pool) {}

  on(channel: string, handler: () => void): void {
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    try {
      const client = await this.pool.connect();
      this.client = client;
      client.on('notification', (n) => this.handlers.get(n.channel)?.forEach((h) => h()));
      client.on('error', () => this.reconnect());
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
      // Catch up on whatever was written while nobody was listening (start, reconnect).
      for (const hs of this.handlers.values()) hs.forEach((h) => h());
    } catch {
      this.reconnect();
    }
  }

  private reconnect(): void {
    const old = this.client;
    this.client = null;
    old?.release(true);
    if (!this.stopped) setTimeout(() => void this.start(), 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.client;
    this.client = null;
    if (c) {
      await c.query('UNLISTEN *').catch(() => {});
      c.release();
    }
  }
}

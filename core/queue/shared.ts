import { errorMessage } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';

interface Entry {
  value: Promise<unknown>;
  dispose?: (value: never) => Promise<void>;
}

/**
 * What a process keeps across its jobs (a clone, an image cache, a pool of warm containers): built by
 * the first job that asks, shared by the later ones, disposed when the queue or worker closes. A
 * failed build is forgotten, so the next job tries again.
 */
export class SharedResources {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly log: Logger) {}

  get<T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void>): Promise<T> {
    const found = this.entries.get(key);
    if (found) return found.value as Promise<T>;
    const value = create();
    this.entries.set(key, { value, dispose: dispose as Entry['dispose'] });
    value.catch(() => this.entries.delete(key));
    return value;
  }

  /** Dispose of everything built, newest first; a failing dispose is logged, the others still run. */
  async disposeAll(): Promise<void> {
    const entries = [...this.entries].reverse();
    this.entries.clear();
    for (const [key, e] of entries) {
      if (!e.dispose) continue;
      try {
        await e.dispose((await e.value) as never);
      } catch (err) {
        this.log.warn(`releasing ${key}: ${errorMessage(err)}`);
      }
    }
  }
}

import { stripUserinfo, type HttpCacheStore } from './cache-store.ts';

/**
 * JSON documents by key on the HTTP cache store, for answers that HTTP cannot cache itself (GitHub's
 * GraphQL pages are POSTs): the caller chooses the key and when a document is still valid. Entries
 * have the store's one shape, with the endpoint they came from as `url` and the JSON text as body.
 */
export class JsonDocuments {
  constructor(
    private readonly store: HttpCacheStore,
    /** The endpoint the documents are answers of (recorded in each entry, without userinfo). */
    private readonly url: string,
  ) {}

  /** The document stored under `key`, or null when absent, torn or not JSON. */
  async get<T>(key: string): Promise<T | null> {
    const entry = await this.store.read(key);
    if (!entry) return null;
    try {
      return JSON.parse(entry.body) as T;
    } catch {
      return null;
    }
  }

  async put(key: string, value: unknown): Promise<void> {
    await this.store.write(key, {
      url: stripUserinfo(this.url),
      status: 200,
      etag: null,
      lastModified: null,
      headers: { 'content-type': 'application/json' },
      storedAt: new Date().toISOString(),
      body: JSON.stringify(value),
    });
  }
}

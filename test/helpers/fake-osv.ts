import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The OSV API on 127.0.0.1 (random port), as documented at https://google.github.io/osv.dev/api/:
 *  - POST /v1/query {package: {name, ecosystem}, page_token?} -> {vulns: [...], next_page_token?}
 *    (pages of `pageSize` records; the token is opaque base64);
 *  - GET /v1/vulns/{id} -> the record, with an ETag (If-None-Match -> 304), 404 {code: 5} when unknown.
 * With `compact`, listed records carry only id and modified (the client must fetch each one).
 */

export interface FakeOsvRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  status: number;
}

export interface FakeOsv {
  readonly baseUrl: string;
  readonly requests: FakeOsvRequest[];
  records: Record<string, unknown>[];
  pageSize: number;
  compact: boolean;
  /** The next request to this path answers `status` once. */
  failOnce(path: string, status: number, headers?: Record<string, string>): void;
  reset(): void;
  close(): Promise<void>;
}

const normPypi = (s: string) => s.toLowerCase().replace(/[-_.]+/g, '-');

export async function startFakeOsv(records: Record<string, unknown>[], opts: { pageSize?: number; compact?: boolean } = {}): Promise<FakeOsv> {
  const requests: FakeOsvRequest[] = [];
  const failures: Array<{ path: string; status: number; headers: Record<string, string> }> = [];
  const state = { records, pageSize: opts.pageSize ?? 2, compact: opts.compact ?? false };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = raw;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        // keep the raw text
      }
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        requests.push({ method: req.method ?? '', path, headers: req.headers, body, status });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(payload === undefined ? '' : JSON.stringify(payload));
      };
      const fail = failures.findIndex((f) => f.path === path);
      if (fail >= 0) {
        const [f] = failures.splice(fail, 1);
        return send(f!.status, { code: 14, message: 'unavailable' }, f!.headers);
      }
      if (req.method === 'POST' && path === '/v1/query') {
        const pkg = body?.package;
        if (!pkg?.name || !pkg?.ecosystem) return send(400, { code: 3, message: 'Invalid query.' });
        const matching = state.records.filter((r: any) =>
          (r.affected ?? []).some((a: any) => a.package?.ecosystem === pkg.ecosystem && normPypi(a.package?.name ?? '') === normPypi(pkg.name)),
        );
        const offset = body.page_token ? Number(Buffer.from(String(body.page_token), 'base64').toString('utf8')) : 0;
        const page = matching.slice(offset, offset + state.pageSize);
        const next = offset + state.pageSize < matching.length ? Buffer.from(String(offset + state.pageSize)).toString('base64') : undefined;
        const vulns = state.compact ? page.map((r: any) => ({ id: r.id, modified: r.modified })) : page;
        return send(200, { vulns, ...(next ? { next_page_token: next } : {}) });
      }
      const vuln = /^\/v1\/vulns\/(.+)$/.exec(path);
      if (req.method === 'GET' && vuln) {
        const rec = state.records.find((r: any) => r.id === decodeURIComponent(vuln[1]!));
        if (!rec) return send(404, { code: 5, message: 'Bug not found.' });
        const etag = `"${createHash('sha1').update(JSON.stringify(rec)).digest('hex')}"`;
        if (req.headers['if-none-match'] === etag) return send(304, undefined, { etag });
        return send(200, rec, { etag });
      }
      return send(404, { code: 5, message: 'Not found' });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    get records() {
      return state.records;
    },
    set records(v) {
      state.records = v;
    },
    get pageSize() {
      return state.pageSize;
    },
    set pageSize(v) {
      state.pageSize = v;
    },
    get compact() {
      return state.compact;
    },
    set compact(v) {
      state.compact = v;
    },
    failOnce: (path, status, headers = {}) => void failures.push({ path, status, headers }),
    reset: () => {
      requests.length = 0;
      failures.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

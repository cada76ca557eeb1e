import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

/**
 * The Hugging Face hub on 127.0.0.1 (random port): the endpoints @huggingface/hub 2.17.5 calls to create
 * a dataset repository and commit to it over classic LFS (useXet: false), as read in its dist code:
 *  - POST /api/repos/create {name, organization, type, visibility} -> {url}; 409 when it exists. A new
 *    repository gets a first commit holding the hub's default .gitattributes (*.parquet via LFS).
 *  - GET  /api/datasets/{id}                      repoExists
 *  - GET  /api/datasets/{id}/revision/{rev}       datasetInfo: {id, private, sha, ...}; 404 RevisionNotFound
 *  - GET  /api/datasets/{id}/tree/{rev}[/{path}]  listFiles (recursive=true: every entry below)
 *  - POST /api/datasets/{id}/preupload/{rev}      {files: [{path, size, sample}]} -> uploadMode lfs | regular
 *  - POST /datasets/{id}.git/info/lfs/objects/batch  basic transfer only (a client offering xet gets basic)
 *  - PUT  /lfs-upload/{oid}                       the upload href; the body must hash to oid
 *  - POST /api/datasets/{id}/commit/{rev}         NDJSON header / file / lfsFile / deletedFile; a parentCommit
 *                                                 that is not the head: 409
 *  - GET  /datasets/{id}/resolve/{rev}/{path}     the file (Range supported), 404 EntryNotFound
 *  - POST /api/datasets/{id}/tag/{rev}            {tag, message?}: a tag on that revision; 409 when the tag exists
 * Writes need `Authorization: Bearer <token>`. `failNext` answers the next matching request with a status
 * (429 + Retry-After), and optionally a body of its own (a JSON value, or text sent as it is: a proxy's
 * page); `onNextCommit` runs just before the next commit is checked (another publisher).
 */

export interface HubFile {
  content: Buffer;
  /** Stored through LFS (the commit named it as an lfsFile). */
  lfs: boolean;
}

export interface HubCommit {
  oid: string;
  parent: string | null;
  title: string;
  files: Map<string, HubFile>;
}

export interface HubRepo {
  id: string;
  private: boolean;
  /** Commits of `main`, oldest first. */
  commits: HubCommit[];
  /** Tag name -> the commit it names, and its message. */
  tags: Map<string, { oid: string; message: string | null }>;
}

export interface HubRequest {
  method: string;
  path: string;
  status: number;
  /** ms since the server started. */
  at: number;
  authorized: boolean;
  /** The raw request body (the commit's NDJSON, the LFS upload). */
  body: Buffer;
}

export interface FakeHub {
  readonly baseUrl: string;
  readonly token: string;
  readonly requests: HubRequest[];
  repo(id: string): HubRepo | undefined;
  /** The files at the head of `main`. */
  headFiles(id: string): Map<string, HubFile>;
  /** A commit made by someone else (no HTTP): a file map merged over the head. */
  commitDirect(id: string, title: string, files: Record<string, string>): HubCommit;
  /**
   * The next request matching `method` and `path` answers `status` with `headers` (once per call), and
   * `body` when given: a string is sent as it is (give its content-type in `headers`), anything else as JSON.
   */
  failNext(method: string, path: RegExp, status: number, headers?: Record<string, string>, body?: unknown): void;
  /** Runs when the next commit request arrives, before its parent is checked. */
  onNextCommit(fn: () => void): void;
  close(): Promise<void>;
}

const DEFAULT_GITATTRIBUTES = ['*.parquet filter=lfs diff=lfs merge=lfs -text', '*.arrow filter=lfs diff=lfs merge=lfs -text', '*.zst filter=lfs diff=lfs merge=lfs -text', ''].join('\n');
const LFS_PATTERNS = [/\.parquet$/, /\.arrow$/, /\.zst$/];

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
/** git's blob id, as the hub's tree lists it. */
const gitBlobId = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

export async function startFakeHub(opts: { token?: string } = {}): Promise<FakeHub> {
  const token = opts.token ?? `hf_${randomBytes(16).toString('hex')}`;
  const repos = new Map<string, HubRepo>();
  const lfsObjects = new Map<string, Buffer>();
  const requests: HubRequest[] = [];
  const failures: Array<{ method: string; path: RegExp; status: number; headers: Record<string, string>; body?: unknown }> = [];
  const commitHooks: Array<() => void> = [];
  const started = Date.now();
  let baseUrl = '';

  const headOf = (repo: HubRepo): HubCommit => repo.commits.at(-1)!;
  const makeCommit = (repo: HubRepo, title: string, files: Map<string, HubFile>): HubCommit => {
    const parent = repo.commits.at(-1)?.oid ?? null;
    const c = { oid: sha1(`${repo.id}\n${parent}\n${title}\n${repo.commits.length}\n${Math.random()}`), parent, title, files };
    repo.commits.push(c);
    return c;
  };

  const handle = (req: IncomingMessage, body: Buffer, res: ServerResponse, record: (status: number) => void): void => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = decodeURIComponent(url.pathname);
    const method = req.method ?? 'GET';
    const authorized = req.headers.authorization === `Bearer ${token}`;
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      record(status);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    const notFound = (code: string, message: string): void => send(404, { error: message }, { 'x-error-code': code });

    const fail = failures.findIndex((f) => f.method === method && f.path.test(path));
    if (fail >= 0) {
      const [f] = failures.splice(fail, 1);
      if (typeof f!.body === 'string') {
        record(f!.status);
        res.writeHead(f!.status, { 'content-type': 'text/plain', ...f!.headers });
        return void res.end(f!.body);
      }
      return send(f!.status, f!.body ?? { error: f!.status === 429 ? 'You have been rate-limited' : 'injected failure' }, f!.headers);
    }

    if (method === 'POST' && path === '/api/repos/create') {
      if (!authorized) return send(401, { error: 'Invalid credentials in Authorization header' });
      const b = JSON.parse(body.toString('utf8')) as { name: string; organization?: string; type?: string; visibility?: string };
      if (b.type !== 'dataset') return send(400, { error: 'only datasets here' });
      const id = `${b.organization}/${b.name}`;
      if (repos.has(id)) return send(409, { error: 'You already created this dataset repo', url: `${baseUrl}/datasets/${id}` });
      const repo: HubRepo = { id, private: b.visibility === 'private', commits: [], tags: new Map() };
      makeCommit(repo, 'initial commit', new Map([['.gitattributes', { content: Buffer.from(DEFAULT_GITATTRIBUTES), lfs: false }]]));
      repos.set(id, repo);
      return send(200, { url: `${baseUrl}/datasets/${id}`, name: id });
    }

    if (method === 'PUT' && path.startsWith('/lfs-upload/')) {
      const oid = path.slice('/lfs-upload/'.length);
      if (sha256(body) !== oid) return send(400, { error: 'content does not hash to the oid' });
      lfsObjects.set(oid, body);
      return send(200, undefined);
    }

    const lfsBatch = /^\/datasets\/([^/]+\/[^/]+)\.git\/info\/lfs\/objects\/batch$/.exec(path);
    if (method === 'POST' && lfsBatch) {
      const repo = repos.get(lfsBatch[1]!);
      if (!repo) return notFound('RepoNotFound', 'Repository not found');
      if (!authorized) return send(401, { message: 'Invalid credentials' });
      const b = JSON.parse(body.toString('utf8')) as { operation: string; objects: Array<{ oid: string; size: number }> };
      const objects = b.objects.map((o) =>
        lfsObjects.has(o.oid) ? { oid: o.oid, size: o.size } : { oid: o.oid, size: o.size, authenticated: true, actions: { upload: { href: `${baseUrl}/lfs-upload/${o.oid}` } } },
      );
      return send(200, { transfer: 'basic', objects }, { 'content-type': 'application/vnd.git-lfs+json' });
    }

    const resolve = /^\/datasets\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (method === 'GET' && resolve) {
      const repo = repos.get(resolve[1]!);
      if (!repo || (repo.private && !authorized)) return notFound('RepoNotFound', 'Repository not found');
      const commit = resolve[2] === 'main' ? headOf(repo) : repo.commits.find((c) => c.oid === resolve[2]);
      const file = commit?.files.get(resolve[3]!);
      if (!commit || !file) return notFound('EntryNotFound', 'Entry not found');
      const etag = `"${file.lfs ? sha256(file.content) : sha1(file.content.toString('latin1'))}"`;
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
      const headers = { etag, 'x-repo-commit': commit.oid, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
      record(range ? 206 : 200);
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), file.content.length - 1) : file.content.length - 1;
        res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${file.content.length}` });
        return void res.end(file.content.subarray(start, end + 1));
      }
      res.writeHead(200, headers);
      return void res.end(file.content);
    }

    const api = /^\/api\/datasets\/([^/]+\/[^/]+)(?:\/(revision|tree|preupload|commit|tag)\/([^/]+)(?:\/(.*))?)?$/.exec(path);
    if (!api) return notFound('NotFound', `no route ${method} ${path}`);
    const [, id, action, rev, rest] = api;
    const repo = repos.get(id!);
    if (!repo || (repo.private && !authorized)) return notFound('RepoNotFound', 'Repository not found');
    if (rev !== undefined && rev !== 'main' && !repo.commits.some((c) => c.oid === rev)) return notFound('RevisionNotFound', `Invalid rev id: ${rev}`);
    const commit = rev === undefined || rev === 'main' ? headOf(repo) : repo.commits.find((c) => c.oid === rev)!;

    if (method === 'GET' && action === undefined) return send(200, { _id: sha1(repo.id), id: repo.id, private: repo.private, sha: headOf(repo).oid });
    if (method === 'GET' && action === 'revision') {
      return send(200, { _id: sha1(repo.id), id: repo.id, private: repo.private, sha: commit.oid, downloads: 0, likes: 0, gated: false, lastModified: new Date().toISOString() });
    }
    if (method === 'GET' && action === 'tree') {
      const prefix = rest ? `${rest}/` : '';
      const recursive = url.searchParams.get('recursive') === 'true';
      const entries = new Map<string, unknown>();
      for (const [p, f] of [...commit.files].sort(([a], [b]) => a.localeCompare(b))) {
        if (!p.startsWith(prefix)) continue;
        const parts = p.slice(prefix.length).split('/');
        for (let i = 1; i < parts.length && (recursive || i === 1); i++) {
          const dir = prefix + parts.slice(0, i).join('/');
          entries.set(dir, { type: 'directory', path: dir, size: 0, oid: sha1(dir) });
        }
        if (recursive || parts.length === 1) {
          entries.set(p, { type: 'file', path: p, size: f.content.length, oid: gitBlobId(f.lfs ? Buffer.from(`oid sha256:${sha256(f.content)}`) : f.content), ...(f.lfs ? { lfs: { oid: sha256(f.content), size: f.content.length, pointerSize: 134 } } : {}) });
        }
      }
      return send(200, [...entries.values()]);
    }
    if (method === 'POST' && action === 'preupload') {
      if (!authorized) return send(401, { error: 'Invalid credentials in Authorization header' });
      const b = JSON.parse(body.toString('utf8')) as { files: Array<{ path: string; size: number; sample: string }> };
      const files = b.files.map((f) => ({
        path: f.path,
        uploadMode: LFS_PATTERNS.some((re) => re.test(f.path)) || f.size >= 10 * 1024 * 1024 || Buffer.from(f.sample, 'base64').includes(0) ? 'lfs' : 'regular',
      }));
      return send(200, { files });
    }
    if (method === 'POST' && action === 'tag') {
      if (!authorized) return send(401, { error: 'Invalid credentials in Authorization header' });
      const b = JSON.parse(body.toString('utf8')) as { tag?: string; message?: string };
      if (!b.tag) return send(400, { error: 'tag is required' });
      if (repo.tags.has(b.tag)) return send(409, { error: `Tag ${b.tag} already exists` });
      repo.tags.set(b.tag, { oid: commit.oid, message: b.message ?? null });
      return send(200, {});
    }
    if (method === 'POST' && action === 'commit') {
      if (!authorized) return send(401, { error: 'Invalid credentials in Authorization header' });
      commitHooks.splice(0).forEach((fn) => fn());
      const lines = body.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; value: any });
      const header = lines.find((l) => l.key === 'header')?.value as { summary: string; parentCommit?: string } | undefined;
      if (!header) return send(400, { error: 'no header' });
      if (header.parentCommit && header.parentCommit !== headOf(repo).oid) {
        return send(409, { error: 'A commit has happened since. Please refresh and try again.' });
      }
      const files = new Map(headOf(repo).files);
      for (const { key, value } of lines) {
        if (key === 'file') files.set(value.path, { content: Buffer.from(value.content, value.encoding === 'base64' ? 'base64' : 'utf8'), lfs: false });
        else if (key === 'lfsFile') {
          const obj = lfsObjects.get(value.oid);
          if (!obj || obj.length !== value.size) return send(422, { error: `LFS object ${value.oid} was not uploaded` });
          files.set(value.path, { content: obj, lfs: true });
        } else if (key === 'deletedFile') files.delete(value.path);
        else if (key !== 'header') return send(400, { error: `unknown key ${key}` });
      }
      const c = makeCommit(repo, header.summary, files);
      return send(200, { success: true, commitOid: c.oid, commitUrl: `${baseUrl}/datasets/${repo.id}/commit/${c.oid}`, hookOutput: '' });
    }
    return notFound('NotFound', `no route ${method} ${path}`);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const at = Date.now() - started;
      const record = (status: number): void =>
        void requests.push({ method: req.method ?? '', path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname, status, at, authorized: req.headers.authorization === `Bearer ${token}`, body });
      try {
        handle(req, body, res, record);
      } catch (err) {
        record(500);
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    token,
    requests,
    repo: (id) => repos.get(id),
    headFiles: (id) => new Map(headOf(repos.get(id)!).files),
    commitDirect(id, title, files) {
      const repo = repos.get(id)!;
      const merged = new Map(headOf(repo).files);
      for (const [p, c] of Object.entries(files)) merged.set(p, { content: Buffer.from(c), lfs: false });
      return makeCommit(repo, title, merged);
    },
    failNext: (method, path, status, headers = {}, body) => void failures.push({ method, path, status, headers, body }),
    onNextCommit: (fn) => void commitHooks.push(fn),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** A port on 127.0.0.1 nothing listens on (bound, then released): a hub that cannot be reached. */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP listener on 127.0.0.1 that answers nothing and counts the connections made to it: where HF_ENDPOINT points when nothing may reach the hub. */
export interface ConnectionRecorder {
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** The first bytes each connection sent (a request line, its headers). */
  readonly received: string[];
  close(): Promise<void>;
}

export async function startConnectionRecorder(): Promise<ConnectionRecorder> {
  const received: string[] = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    const i = received.push('') - 1;
    socket.on('data', (b: Buffer) => void (received[i] += b.toString('latin1')));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return received.length;
    },
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

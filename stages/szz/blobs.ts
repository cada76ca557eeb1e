import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Close the reader after this long without a request: a later request starts it again. */
const IDLE_MS = 1000;

/** One `git cat-file --batch` process with its own replies buffer and the requests it has yet to answer, in order. */
interface Batch {
  proc: ChildProcessWithoutNullStreams;
  buf: Buffer;
  pending: Array<{ resolve: (text: string | null) => void; reject: (err: Error) => void }>;
  idle: NodeJS.Timeout | null;
}

/**
 * Files at a revision through one long-lived `git cat-file --batch`: an add-only fix's file (for its
 * enclosing function) without a git process per file. The process lives while requests keep coming.
 */
export class BlobReader {
  private batch: Batch | null = null;

  constructor(
    private readonly clone: string,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** The text of `path` at `rev`; null when it is not a file there. A name batch mode cannot carry (a newline in it) is refused: the caller reads it otherwise. */
  read(rev: string, path: string): Promise<string | null> {
    if (/[\n\r]/.test(path) || /[\n\r]/.test(rev)) return Promise.reject(new Error('a newline in a name: read it with git show'));
    const b = this.start();
    if (b.idle) clearTimeout(b.idle);
    b.idle = null;
    return new Promise((resolve, reject) => {
      b.pending.push({ resolve, reject });
      b.proc.stdin.write(`${rev}:${path}\n`);
    });
  }

  private start(): Batch {
    if (this.batch) return this.batch;
    const proc = spawn('git', ['cat-file', '--batch'], { cwd: this.clone, stdio: ['pipe', 'pipe', 'pipe'] });
    const b: Batch = { proc, buf: Buffer.alloc(0), pending: [], idle: null };
    this.batch = b;
    proc.stdout.on('data', (d: Buffer) => {
      b.buf = Buffer.concat([b.buf, d]);
      this.drain(b);
    });
    proc.stderr.resume();
    // A process that ends or fails answers none of its own requests again; later requests start another.
    const fail = (err: Error): void => {
      if (this.batch === b) this.batch = null;
      for (const p of b.pending.splice(0)) p.reject(err);
    };
    proc.on('error', fail);
    proc.on('close', (code) => fail(new Error(`git cat-file --batch ended (exit ${code}) in ${this.clone}`)));
    proc.stdin.on('error', fail);
    return b;
  }

  /** Answer the oldest requests whose replies are complete in the buffer. */
  private drain(b: Batch): void {
    for (;;) {
      const nl = b.buf.indexOf(0x0a);
      if (nl < 0 || !b.pending.length) break;
      const header = b.buf.subarray(0, nl).toString('utf8');
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        b.buf = b.buf.subarray(nl + 1);
        b.pending.shift()!.resolve(null);
        continue;
      }
      const [, type = '', size = '0'] = header.split(' ');
      const n = Number(size);
      if (b.buf.length < nl + 1 + n + 1) break;
      const body = b.buf.subarray(nl + 1, nl + 1 + n);
      b.buf = b.buf.subarray(nl + 1 + n + 1);
      b.pending.shift()!.resolve(type === 'blob' ? body.toString('utf8') : null);
    }
    if (!b.pending.length && this.batch === b && !b.idle) {
      b.idle = setTimeout(() => {
        b.idle = null;
        if (this.batch !== b || b.pending.length) return;
        this.batch = null;
        b.proc.stdin.end();
      }, this.idleMs);
      b.idle.unref();
    }
  }
}

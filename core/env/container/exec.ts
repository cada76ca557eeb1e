/** One `docker exec` with demultiplexed, bounded output capture and a JS-side deadline. */
import { PassThrough, type Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';

export interface ExecOptions {
  /** Kill switch: after this many ms `onDeadline` runs (e.g. kills the container). */
  deadlineMs?: number;
  onDeadline?: () => Promise<void>;
  /** 'combined': stdout+stderr as text (head + tail kept); 'stdout': stdout only, whole. */
  capture: 'combined' | 'stdout';
  /** Limit of the kept text: 'combined' keeps this much head plus TAIL_CHARS tail; 'stdout' fails past it. */
  maxChars?: number;
  /** The exec's user (`uid:gid`); default the container's. */
  user?: string;
  /** Written to the command's standard input, which is then closed (files reach a read-only container this way: putArchive cannot write into a tmpfs). */
  stdin?: Buffer;
  /** 'combined' capture only: each piece of output as it arrives (a build's heartbeat names its last line). */
  onOutput?: (text: string) => void;
  /** Variables of the exec's own environment (`NAME=value`): unlike the command line, not shown in Docker's events. */
  env?: readonly string[];
}

export interface ExecOutcome {
  exitCode: number | null;
  text: string;
  deadlineHit: boolean;
  /** 'stdout' capture only: more than maxChars arrived and the text is incomplete. */
  overflow: boolean;
}

const TAIL_CHARS = 64 * 1024;
/** Marks the place where BoundedText dropped the middle of an output. */
export const DROPPED = ' characters dropped …]';

/** Keeps the first `headMax` and the last TAIL_CHARS characters of a stream of text. */
class BoundedText {
  private head = '';
  private tail = '';
  private dropped = 0;
  constructor(private readonly headMax: number) {}
  push(s: string): void {
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += s.slice(0, room);
      s = s.slice(room);
    }
    if (!s) return;
    this.tail += s;
    if (this.tail.length > 2 * TAIL_CHARS) {
      const cut = this.tail.length - TAIL_CHARS;
      this.dropped += cut;
      this.tail = this.tail.slice(cut);
    }
  }
  text(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[… ${this.dropped}${DROPPED}\n${this.tail}`;
  }
}

export async function runExec(container: Docker.Container, cmd: string[], opts: ExecOptions): Promise<ExecOutcome> {
  const maxChars = opts.maxChars ?? (opts.capture === 'combined' ? 1024 * 1024 : 256 * 1024 * 1024);
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, AttachStdin: opts.stdin !== undefined, Tty: false, ...(opts.user ? { User: opts.user } : {}), ...(opts.env ? { Env: [...opts.env] } : {}) });
  const stream: Duplex = await exec.start({ hijack: true, stdin: opts.stdin !== undefined });
  if (opts.stdin !== undefined) stream.end(opts.stdin);

  const combined = new BoundedText(maxChars);
  const stdoutChunks: Buffer[] = [];
  let stdoutBytes = 0;
  let overflow = false;
  const out = new PassThrough();
  const err = new PassThrough();
  const outDec = new StringDecoder('utf8');
  const errDec = new StringDecoder('utf8');
  const push = (text: string): void => {
    combined.push(text);
    opts.onOutput?.(text);
  };
  out.on('data', (b: Buffer) => {
    if (opts.capture === 'combined') return push(outDec.write(b));
    if (stdoutBytes + b.length > maxChars) overflow = true;
    else {
      stdoutChunks.push(b);
      stdoutBytes += b.length;
    }
  });
  err.on('data', (b: Buffer) => {
    if (opts.capture === 'combined') push(errDec.write(b));
  });
  container.modem.demuxStream(stream, out, err);

  let deadlineHit = false;
  let killed: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let forceEnd: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      resolve();
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
    if (opts.deadlineMs !== undefined) {
      timer = setTimeout(() => {
        deadlineHit = true;
        killed = (opts.onDeadline?.() ?? Promise.resolve()).catch(() => undefined);
        // The stream ends when the killed process's container stops; do not wait forever regardless.
        forceEnd = setTimeout(() => {
          stream.destroy();
          finish();
        }, 20_000);
      }, opts.deadlineMs);
    }
  });
  clearTimeout(timer);
  clearTimeout(forceEnd);
  await killed; // the kill is complete before the caller looks at the container

  // The exit code is set a moment after the stream ends.
  let exitCode: number | null = null;
  for (let i = 0; i < 50; i++) {
    try {
      const info = await exec.inspect();
      if (!info.Running) {
        exitCode = info.ExitCode;
        break;
      }
    } catch {
      break; // the container is gone
    }
    await new Promise((r) => setTimeout(r, Math.min(20 * (i + 1), 200)));
  }

  if (opts.capture === 'combined') {
    combined.push(outDec.end() + errDec.end());
    return { exitCode, text: combined.text(), deadlineHit, overflow: false };
  }
  return { exitCode, text: Buffer.concat(stdoutChunks).toString('utf8'), deadlineHit, overflow };
}

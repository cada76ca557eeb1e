import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { redact } from './secrets.ts';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A progress line: redrawn in place on a terminal, logged at milestones elsewhere. */
  progress(label: string, done: number, total: number): void;
  child(fields: Record<string, unknown>): Logger;
  /** Point the structured log at a file (JSON lines). */
  toFile(path: string): void;
}

interface Sink {
  file: string | null;
  level: Level;
  quiet: boolean;
  lastProgress: string;
}

/** Structured JSON lines to a file; short human lines on stderr. */
export function createLogger(opts: { level?: Level; quiet?: boolean; file?: string } = {}): Logger {
  const sink: Sink = { file: null, level: opts.level ?? 'info', quiet: opts.quiet ?? false, lastProgress: '' };
  const logger = make(sink, {});
  if (opts.file) logger.toFile(opts.file);
  return logger;
}

function make(sink: Sink, bound: Record<string, unknown>): Logger {
  const tty = process.stderr.isTTY === true;
  const write = (level: Level, msg: string, fields: Record<string, unknown> = {}): void => {
    const all = { ...bound, ...fields };
    if (sink.file) {
      const line = redact(JSON.stringify({ time: new Date().toISOString(), level, msg, ...all }));
      appendFileSync(sink.file, line + '\n');
    }
    if (ORDER[level] < ORDER[sink.level] || sink.quiet) return;
    const stage = typeof all.stage === 'string' ? `[${all.stage}] ` : '';
    const prefix = level === 'warn' ? 'warning: ' : level === 'error' ? 'error: ' : '';
    clearProgress(sink, tty);
    process.stderr.write(redact(`${stage}${prefix}${msg}`) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    progress(label, done, total) {
      if (sink.file) appendFileSync(sink.file, redact(JSON.stringify({ time: new Date().toISOString(), level: 'debug', msg: 'progress', label, done, total, ...bound })) + '\n');
      if (sink.quiet) return;
      const stage = typeof bound.stage === 'string' ? `[${bound.stage}] ` : '';
      const line = redact(`${stage}${label} ${done}/${total}`);
      if (tty) {
        process.stderr.write(`\r\x1b[2K${line}`);
        sink.lastProgress = line;
        if (done >= total) clearProgress(sink, tty);
      } else if (done === total || done === 1 || done % Math.max(1, Math.ceil(total / 10)) === 0) {
        process.stderr.write(line + '\n');
      }
    },
    child: (fields) => make(sink, { ...bound, ...fields }),
    toFile(path) {
      mkdirSync(dirname(path), { recursive: true });
      sink.file = path;
    },
  };
}

function clearProgress(sink: Sink, tty: boolean): void {
  if (tty && sink.lastProgress) {
    process.stderr.write('\r\x1b[2K');
    sink.lastProgress = '';
  }
}

/** A logger that prints nothing: for tests and library use. */
export const silentLogger: Logger = createLogger({ quiet: true });

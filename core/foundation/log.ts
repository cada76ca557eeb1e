import pino from 'pino';
import { describeProgress, ProgressTracker, TerminalBars, type ProgressStats } from './progress.ts';
import { redact } from './secrets.ts';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface ProgressOptions {
  /** How many of `done` were reused from a checkpoint (no work, so not counted in the rate). */
  reused?: number;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /**
   * `done` of `total` items of the loop `label` (call it with 0 when the loop starts, so the rate counts
   * from there): a bar with rate and ETA on a terminal, a plain line now and then elsewhere
   * (core/foundation/progress.ts), and one line per call in the file log.
   */
  progress(label: string, done: number, total: number, opts?: ProgressOptions): void;
  child(fields: Record<string, unknown>): Logger;
  /** Point the structured log at a file (JSON lines). */
  toFile(path: string): void;
}

/** The structured log: pino writing JSON lines to one file. */
interface FileLog {
  dest: pino.DestinationStream & { destroy(): void };
  pino: pino.Logger;
}

interface Sink {
  file: FileLog | null;
  level: Level;
  quiet: boolean;
  /** Bars on stderr when it is a terminal; null: plain lines. */
  bars: TerminalBars | null;
  /** Running loops by stage and label. */
  loops: Map<string, ProgressTracker>;
}

/**
 * The file log. Synchronous: each line is written (to the kernel) before the call returns, so a process
 * that exits right after logging (process.exit, an uncaught error, a signal) loses nothing, with no exit
 * hook to get right; the log is a handful of lines a second, too few for buffering to pay. Appended, so
 * processes sharing a file interleave whole lines.
 */
function openFileLog(path: string): FileLog {
  const dest = pino.destination({ dest: path, sync: true, mkdir: true, append: true });
  const log = pino(
    {
      level: 'debug',
      // The fields readers know: time (ISO), level (its name), msg and the caller's own; no pid or hostname.
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Redaction by value, on the finished line (secrets.ts registers the JSON-escaped form of each secret too).
      hooks: { streamWrite: redact },
    },
    dest,
  );
  return { dest, pino: log };
}

/** Structured JSON lines to a file (pino); short human lines on stderr. */
export function createLogger(opts: { level?: Level; quiet?: boolean; file?: string } = {}): Logger {
  const sink: Sink = {
    file: null,
    level: opts.level ?? 'info',
    quiet: opts.quiet ?? false,
    bars: process.stderr.isTTY === true ? new TerminalBars(process.stderr) : null,
    loops: new Map(),
  };
  const logger = make(sink, {});
  if (opts.file) logger.toFile(opts.file);
  return logger;
}

function make(sink: Sink, bound: Record<string, unknown>): Logger {
  const toFile = (level: Level, msg: string, fields: Record<string, unknown>): void => {
    sink.file?.pino[level](fields, msg);
  };
  const toTerminal = (line: string): void => {
    if (sink.bars) sink.bars.log(redact(line));
    else process.stderr.write(redact(line) + '\n');
  };
  const stagePrefix = typeof bound.stage === 'string' ? `[${bound.stage}] ` : '';
  const write = (level: Level, msg: string, fields: Record<string, unknown> = {}): void => {
    const all = { ...bound, ...fields };
    toFile(level, msg, all);
    if (ORDER[level] < ORDER[sink.level] || sink.quiet) return;
    const stage = typeof all.stage === 'string' ? `[${all.stage}] ` : '';
    const prefix = level === 'warn' ? 'warning: ' : level === 'error' ? 'error: ' : '';
    toTerminal(`${stage}${prefix}${msg}`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    progress(label, done, total, opts = {}) {
      const update = { done, total, reused: opts.reused ?? 0 };
      const now = Date.now();
      const key = `${stagePrefix}\0${label}`;
      let loop = sink.loops.get(key);
      // Counting from lower again: a new loop under the same label.
      if (!loop || done < loop.lastDone) sink.loops.set(key, (loop = new ProgressTracker(update, now)));
      const stats = loop.stats(update, now);
      if (done >= total) sink.loops.delete(key);
      toFile('debug', 'progress', { label, done, total, ...fileFields(stats), ...bound });
      if (sink.quiet) return;
      const title = `${stagePrefix}${label}`;
      if (sink.bars) sink.bars.update(key, redact(title), stats);
      else if (loop.lineDue(stats, now)) process.stderr.write(redact(`${title} ${describeProgress(stats)}`) + '\n');
    },
    child: (fields) => make(sink, { ...bound, ...fields }),
    toFile(path) {
      // Opened afresh even for the same path: the folder may have been replaced since.
      sink.file?.dest.destroy();
      sink.file = openFileLog(path);
    },
  };
}

/** Rate and ETA in the file log, in numbers a reader can compare. */
function fileFields(s: ProgressStats): Record<string, number> {
  const out: Record<string, number> = {};
  if (s.reused) out.reused = s.reused;
  if (s.rate !== null) out.rate_per_s = Math.round(s.rate * 1000) / 1000;
  if (s.etaMs !== null && s.done < s.total) out.eta_s = Math.round(s.etaMs / 1000);
  return out;
}

/** A logger that prints nothing: for tests and library use. */
export const silentLogger: Logger = createLogger({ quiet: true });

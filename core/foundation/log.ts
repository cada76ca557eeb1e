import pino from 'pino';
import { describeNote, describeProgress, NoteBoard, ProgressTracker, TerminalBars, type ProgressStats } from './progress.ts';
import { redact } from './secrets.ts';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** `text`: short lines for people (bars on a terminal); `json`: one JSON object a line, as the file log has them. */
export type LogFormat = 'text' | 'json';

/** How often running items' notes are looked at, to print the changed ones and the heartbeats off a terminal. */
const NOTE_TICK_MS = 1000;

export interface LoggerOptions {
  /** The least level shown on the terminal (the file gets every level). */
  level?: Level;
  /** Debug output on the terminal, whatever `level` says (`-v`). */
  verbose?: boolean;
  quiet?: boolean;
  format?: LogFormat;
  file?: string;
}

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
  /**
   * What the bound item (stage and `instance_id`) is doing now, e.g. `S3 run 2/3`; null once it is done.
   * One debug line in the file per call, with the bound fields and `fields`. On a terminal it shows beside
   * the stage's bar; elsewhere it is printed when it changes (at most every NOTE_MIN_INTERVAL_MS) and again
   * every HEARTBEAT_MS while it stands, so a long item is never silent.
   */
  note(text: string | null, fields?: Record<string, unknown>): void;
  /**
   * One-time setup (an image build) starts: the bound stage's running loops leave it out of their rate
   * until the returned function is called. `slots`: the loop's items run that many at once.
   */
  setup(slots?: number): () => void;
  child(fields: Record<string, unknown>): Logger;
  /** Point the structured log at a file (JSON lines). */
  toFile(path: string): void;
}

/** The structured log: pino writing JSON lines to one file. */
interface FileLog {
  dest: pino.DestinationStream & { destroy(): void };
  pino: pino.Logger;
}

interface Loop {
  tracker: ProgressTracker;
  title: string;
  /** The stage prefix its notes are grouped by. */
  group: string;
}

interface NoteData {
  group: string;
  msg: string;
  fields: Record<string, unknown>;
}

interface Sink {
  file: FileLog | null;
  level: Level;
  quiet: boolean;
  /** The terminal as JSON lines (`format: json`); null: text. */
  json: pino.Logger | null;
  /** Bars on stderr when it is a terminal and the format is text; null: plain lines. */
  bars: TerminalBars | null;
  /** Running loops by stage and label. */
  loops: Map<string, Loop>;
  /** Running items' notes by stage and item. */
  notes: NoteBoard<NoteData>;
  timer: ReturnType<typeof setTimeout> | null;
}

/** The lines both JSON logs write: time (ISO), level (its name), msg and the caller's fields; no pid or hostname. */
function jsonLines(dest: pino.DestinationStream): pino.Logger {
  return pino(
    {
      level: 'debug',
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Redaction by value, on the finished line (secrets.ts registers the JSON-escaped form of each secret too).
      hooks: { streamWrite: redact },
    },
    dest,
  );
}

/**
 * The file log. Synchronous: each line is written (to the kernel) before the call returns, so a process
 * that exits right after logging (process.exit, an uncaught error, a signal) loses nothing, with no exit
 * hook to get right; the log is a handful of lines a second, too few for buffering to pay. Appended, so
 * processes sharing a file interleave whole lines.
 */
function openFileLog(path: string): FileLog {
  const dest = pino.destination({ dest: path, sync: true, mkdir: true, append: true });
  return { dest, pino: jsonLines(dest) };
}

/** Structured JSON lines to a file (pino); short human lines, or the same JSON lines, on stderr. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const json = opts.format === 'json';
  const sink: Sink = {
    file: null,
    level: opts.verbose ? 'debug' : (opts.level ?? 'info'),
    quiet: opts.quiet ?? false,
    json: json ? jsonLines({ write: (line: string) => void process.stderr.write(line) }) : null,
    bars: !json && process.stderr.isTTY === true ? new TerminalBars(process.stderr) : null,
    loops: new Map(),
    notes: new NoteBoard(),
    timer: null,
  };
  const logger = make(sink, {});
  if (opts.file) logger.toFile(opts.file);
  return logger;
}

/** Whether the terminal shows lines of this level. */
function shows(sink: Sink, level: Level): boolean {
  return !sink.quiet && ORDER[level] >= ORDER[sink.level];
}

/** A text line on stderr: above the bars when they are shown. */
function terminalLine(sink: Sink, line: string): void {
  if (sink.bars) sink.bars.log(redact(line));
  else process.stderr.write(redact(line) + '\n');
}

/** The notes of a stage's items, as its bars show them. */
function notesOf(sink: Sink, group: string): string[] {
  return sink.notes.current(`${group}\0`).map((n) => redact(n.text));
}

/** Redraw a stage's bars with its items' current notes. */
function redrawBars(sink: Sink, group: string, now: number): void {
  if (!sink.bars) return;
  for (const [key, loop] of sink.loops) {
    if (loop.group !== group || !sink.bars.has(key)) continue;
    sink.bars.update(key, redact(loop.title), loop.tracker.stats(loop.tracker.last, now), notesOf(sink, group));
  }
}

/** Print the notes due now: new or changed ones, and heartbeats (a stage whose bar is shown has them beside it). */
function printNotes(sink: Sink, now: number): void {
  for (const n of sink.notes.due(now)) {
    const { group, msg, fields } = n.data;
    if (sink.json) sink.json.info(n.repeat ? { ...fields, for_s: Math.round(n.forMs / 1000) } : fields, msg);
    else if (!(sink.bars && [...sink.loops].some(([key, l]) => l.group === group && sink.bars!.has(key)))) terminalLine(sink, `${group}${describeNote(n)}`);
  }
}

/** Look at the notes again in a while, as long as any item has one; the timer never keeps the process alive. */
function scheduleNotes(sink: Sink): void {
  if (sink.timer || sink.notes.size === 0) return;
  sink.timer = setTimeout(() => {
    sink.timer = null;
    printNotes(sink, Date.now());
    scheduleNotes(sink);
  }, NOTE_TICK_MS);
  sink.timer.unref?.();
}

function make(sink: Sink, bound: Record<string, unknown>): Logger {
  const toFile = (level: Level, msg: string, fields: Record<string, unknown>): void => {
    sink.file?.pino[level](fields, msg);
  };
  const stagePrefix = typeof bound.stage === 'string' ? `[${bound.stage}] ` : '';
  const itemPrefix = typeof bound.instance_id === 'string' ? `${bound.instance_id}: ` : '';
  const write = (level: Level, msg: string, fields: Record<string, unknown> = {}): void => {
    const all = { ...bound, ...fields };
    toFile(level, msg, all);
    if (!shows(sink, level)) return;
    if (sink.json) {
      sink.json[level](all, msg);
      return;
    }
    const stage = typeof all.stage === 'string' ? `[${all.stage}] ` : '';
    const prefix = level === 'warn' ? 'warning: ' : level === 'error' ? 'error: ' : '';
    const item = typeof all.instance_id === 'string' ? `${all.instance_id}: ` : '';
    terminalLine(sink, `${stage}${prefix}${item}${msg}`);
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
      const title = `${stagePrefix}${label}`;
      let loop = sink.loops.get(key);
      // Counting from lower again: a new loop under the same label.
      if (!loop || done < loop.tracker.lastDone) sink.loops.set(key, (loop = { tracker: new ProgressTracker(update, now), title, group: stagePrefix }));
      const stats = loop.tracker.stats(update, now);
      if (done >= total) sink.loops.delete(key);
      toFile('debug', 'progress', { label, done, total, ...fileFields(stats), ...bound });
      if (!shows(sink, 'info')) return;
      if (sink.bars) sink.bars.update(key, redact(title), stats, notesOf(sink, stagePrefix));
      else if (loop.tracker.lineDue(stats, now)) {
        if (sink.json) sink.json.info({ label, done, total, ...fileFields(stats), ...bound }, 'progress');
        else terminalLine(sink, `${title} ${describeProgress(stats)}`);
      }
    },
    note(text, fields = {}) {
      const all = { ...bound, ...fields };
      if (text !== null) toFile('debug', text, all);
      if (!shows(sink, 'info')) return;
      const now = Date.now();
      const key = `${stagePrefix}\0${typeof bound.instance_id === 'string' ? bound.instance_id : ''}`;
      if (text === null) sink.notes.delete(key);
      else sink.notes.set(key, { text: `${itemPrefix}${text}`, data: { group: stagePrefix, msg: text, fields: all } }, now);
      redrawBars(sink, stagePrefix, now);
      printNotes(sink, now);
      scheduleNotes(sink);
    },
    setup(slots = 1) {
      const now = Date.now();
      const ends = [...sink.loops.values()].filter((l) => l.group === stagePrefix).map((l) => l.tracker.beginSetup(now, slots));
      return () => {
        const end = Date.now();
        for (const e of ends) e(end);
      };
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
  if (s.setupMs >= 1000) out.setup_s = Math.round(s.setupMs / 1000);
  return out;
}

/** A logger that prints nothing: for tests and library use. */
export const silentLogger: Logger = createLogger({ quiet: true });

/**
 * `log`, whose items' notes (and its children's) also go to `forward`: a worker sends what its job is doing
 * to the coordinator, whose terminal shows it as if the item ran there.
 */
export function forwardingNotes(log: Logger, forward: (text: string | null) => void): Logger {
  return {
    ...log,
    note(text, fields) {
      log.note(text, fields);
      forward(text);
    },
    child: (fields) => forwardingNotes(log.child(fields), forward),
  };
}

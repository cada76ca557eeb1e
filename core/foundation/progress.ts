/**
 * Progress of a long loop (discover, szz, validate, judge, eval): how far it is, how fast it goes and how
 * long is left. On a terminal a cli-progress bar is redrawn in place, with log lines printed above it;
 * elsewhere (CI, a pipe) a plain line is printed for the first update, the first computed item, the last
 * one, and otherwise at most every few seconds, less often as the loop runs on, so the log of an
 * hours-long validate stays readable. Inside an item, notes say what it is doing now (a chain's state and
 * run, a bisection probe): shown beside the bar on a terminal, elsewhere printed when they change (at most
 * every NOTE_MIN_INTERVAL_MS) and again every HEARTBEAT_MS while the work goes on. Time marked as one-time
 * setup (image builds) is left out of the rate. core/foundation/log.ts owns when and where; this module owns
 * the arithmetic, the wording and the bar.
 */
import cliProgress from 'cli-progress';

export interface ProgressUpdate {
  done: number;
  total: number;
  /** How many of `done` came from a checkpoint: they took no time, so the rate leaves them out. */
  reused?: number;
}

export interface ProgressStats {
  done: number;
  total: number;
  reused: number;
  elapsedMs: number;
  /** Of elapsedMs, the share spent in one-time setup (image builds), which the rate leaves out. */
  setupMs: number;
  /** Items computed per second since the loop started; null until one was. */
  rate: number | null;
  /** Time left at that rate; null while the rate is unknown. */
  etaMs: number | null;
}

/** Plain lines are at least this far apart (except the first, the first computed item and the last)... */
export const MIN_LINE_INTERVAL_MS = 5_000;
/** ...and at most this far, growing with the loop's age (a tenth of it) in between. */
export const MAX_LINE_INTERVAL_MS = 60_000;

/** A changed note is printed at most this often per item off a terminal... */
export const NOTE_MIN_INTERVAL_MS = 10_000;
/** ...and the current one again after this long without a line, while the item works on. */
export const HEARTBEAT_MS = 30_000;

/** One loop, from its first progress update. */
export class ProgressTracker {
  readonly startedAt: number;
  /** Items computed before the first update: their time is unknown, so they are not in the rate. */
  private readonly baseComputed: number;
  lastDone: number;
  /** The last update, to redraw the loop when only its notes changed. */
  last: ProgressUpdate;
  private lastLineAt: number | null = null;
  private rateShown = false;
  /** Setup finished, already divided by its slots. */
  private setupDoneMs = 0;
  private readonly setups = new Set<{ since: number; slots: number }>();

  constructor(first: ProgressUpdate, now: number) {
    this.startedAt = now;
    this.baseComputed = first.done - (first.reused ?? 0);
    this.lastDone = first.done;
    this.last = first;
  }

  /**
   * One-time setup (an image build) starts in one of the loop's `slots` parallel slots: until the returned
   * function is called, that slot's time is not the items' time. With one slot the setup's whole wall time
   * leaves the rate; with n, a 1/n share (the other slots work meanwhile), so slots waiting on one build
   * together leave it out once.
   */
  beginSetup(now: number, slots = 1): (now: number) => void {
    const s = { since: now, slots: Math.max(1, Number.isFinite(slots) ? slots : 1) };
    this.setups.add(s);
    return (end) => {
      if (!this.setups.delete(s)) return;
      this.setupDoneMs += Math.max(0, end - s.since) / s.slots;
    };
  }

  private setupMs(now: number): number {
    let ms = this.setupDoneMs;
    for (const s of this.setups) ms += Math.max(0, now - s.since) / s.slots;
    return ms;
  }

  stats(u: ProgressUpdate, now: number): ProgressStats {
    this.lastDone = u.done;
    this.last = u;
    const reused = u.reused ?? 0;
    const elapsedMs = Math.max(0, now - this.startedAt);
    const setupMs = Math.min(elapsedMs, this.setupMs(now));
    const workMs = elapsedMs - setupMs;
    const computed = u.done - reused - this.baseComputed;
    const rate = computed > 0 && workMs > 0 ? (computed * 1000) / workMs : null;
    const etaMs = rate === null ? null : (Math.max(0, u.total - u.done) / rate) * 1000;
    return { done: u.done, total: u.total, reused, elapsedMs, setupMs, rate, etaMs };
  }

  /** Whether a plain line is due for this update (and, if so, count it as printed). */
  lineDue(s: ProgressStats, now: number): boolean {
    const interval = Math.min(MAX_LINE_INTERVAL_MS, Math.max(MIN_LINE_INTERVAL_MS, s.elapsedMs / 10));
    const due =
      this.lastLineAt === null || s.done >= s.total || (s.rate !== null && !this.rateShown) || now - this.lastLineAt >= interval;
    if (due) {
      this.lastLineAt = now;
      if (s.rate !== null) this.rateShown = true;
    }
    return due;
  }
}

/** `12/30 (0.4/s, ETA 45s)`; `30/30 (0.4/s, took 1m15s)`; `0/30 (starting)`. */
export function describeProgress(s: ProgressStats): string {
  const parts: string[] = [];
  if (s.reused > 0) parts.push(`${s.reused} reused`);
  if (s.rate !== null) parts.push(formatRate(s.rate));
  if (s.done >= s.total) parts.push(`took ${formatDuration(s.elapsedMs)}`);
  else if (s.etaMs !== null) parts.push(`ETA ${formatDuration(s.etaMs)}`);
  else parts.push(s.done === 0 ? 'starting' : 'ETA unknown');
  return `${s.done}/${s.total} (${parts.join(', ')})`;
}

/** What an item is doing now, as a line reads it, with what the caller needs to write it (its fields). */
export interface Note<T> {
  text: string;
  data: T;
}

/** A note that is due to be printed: `repeat` when it was printed before (a heartbeat), `forMs` since it was set. */
export interface DueNote<T> extends Note<T> {
  key: string;
  repeat: boolean;
  forMs: number;
}

/**
 * The current note of each running item (keyed by the caller: stage and item) and when each was printed:
 * a new item's note is due at once, a changed one once NOTE_MIN_INTERVAL_MS passed since the item's last
 * line, an unchanged one again every HEARTBEAT_MS.
 */
export class NoteBoard<T> {
  private readonly notes = new Map<string, Note<T> & { since: number; printed: string | null; printedAt: number | null }>();

  constructor(private readonly intervals: { minMs: number; heartbeatMs: number } = { minMs: NOTE_MIN_INTERVAL_MS, heartbeatMs: HEARTBEAT_MS }) {}

  get size(): number {
    return this.notes.size;
  }

  set(key: string, note: Note<T>, now: number): void {
    const had = this.notes.get(key);
    if (had && had.text === note.text) {
      had.data = note.data;
      return;
    }
    this.notes.set(key, { ...note, since: now, printed: had?.printed ?? null, printedAt: had?.printedAt ?? null });
  }

  delete(key: string): void {
    this.notes.delete(key);
  }

  /** The current notes whose keys start with `prefix`, oldest item first. */
  current(prefix = ''): Array<Note<T> & { key: string }> {
    return [...this.notes].filter(([k]) => k.startsWith(prefix)).map(([key, n]) => ({ key, text: n.text, data: n.data }));
  }

  /** The notes due now, each counted as printed. */
  due(now: number): Array<DueNote<T>> {
    const out: Array<DueNote<T>> = [];
    for (const [key, n] of this.notes) {
      const quiet = n.printedAt === null ? Infinity : now - n.printedAt;
      const changed = n.printed !== n.text;
      if (changed ? quiet < this.intervals.minMs : quiet < this.intervals.heartbeatMs) continue;
      out.push({ key, text: n.text, data: n.data, repeat: !changed, forMs: Math.max(0, now - n.since) });
      n.printed = n.text;
      n.printedAt = now;
    }
    return out;
  }
}

/** A note's line: `minilib__1-9: S3 run 2/3`, and on a heartbeat `... (45s so far)`. */
export function describeNote(n: Pick<DueNote<unknown>, 'text' | 'repeat' | 'forMs'>): string {
  return n.repeat ? `${n.text} (${formatDuration(n.forMs)} so far)` : n.text;
}

/** Items per second, per minute or per hour: whichever reads as a number above 0.1. */
export function formatRate(perSecond: number): string {
  if (perSecond >= 10) return `${Math.round(perSecond)}/s`;
  if (perSecond >= 0.1) return `${perSecond.toFixed(1)}/s`;
  if (perSecond * 60 >= 0.1) return `${(perSecond * 60).toFixed(1)}/min`;
  return `${(perSecond * 3600).toFixed(1)}/h`;
}

/** `45s`, `3m05s`, `2h07m`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A MultiBar whose redraw timer never keeps the process alive (a failed loop leaves its bar unfinished). */
class Bars extends cliProgress.MultiBar {
  override create(...args: Parameters<cliProgress.MultiBar['create']>): cliProgress.SingleBar {
    const bar = super.create(...args);
    this.unrefTimer();
    return bar;
  }

  override update(): void {
    super.update();
    this.unrefTimer();
  }

  private unrefTimer(): void {
    (this as unknown as { timer: NodeJS.Timeout | null }).timer?.unref();
  }
}

/** Every TerminalBars with a bar shown: the terminal is one per process. */
const live = new Set<TerminalBars>();

/** Remove every progress bar from the terminal, so a message printed next starts on a clean line. */
export function stopProgressBars(): void {
  for (const t of live) t.stop();
}

/** The bars on one terminal stream, one per running loop, with log lines printed above them. */
export class TerminalBars {
  private bars: Bars | null = null;
  private readonly shown = new Map<string, cliProgress.SingleBar>();

  constructor(private readonly stream: NodeJS.WriteStream) {}

  /** Draw (or finish) the bar of loop `key`, with its items' notes beside it; a finished loop leaves its final line above the others. */
  update(key: string, title: string, s: ProgressStats, notes: readonly string[] = []): void {
    const detail = describeProgress(s);
    if (s.done >= s.total) {
      this.finish(key, `${title} ${detail}`);
      return;
    }
    const payload = { title, detail: [detail, ...notes].join(' · ') };
    const shown = this.shown.get(key);
    if (shown) {
      shown.setTotal(s.total);
      shown.update(s.done, payload);
      return;
    }
    this.bars ??= new Bars({
      stream: this.stream,
      format: (opts, params, p: { title: string; detail: string }) => `${p.title} ${cliProgress.Format.BarFormat(params.progress, opts)} ${p.detail}`,
      barsize: 24,
      fps: 5,
      // Our log lines clear the bar's line: it must be drawn again even when its text did not change.
      forceRedraw: true,
      clearOnComplete: true,
      // Leave the terminal's modes alone (a killed run must not leave wrapping off or the cursor hidden)
      // and the signals to pipeline/signals.ts. `linewrap: null` would read as the default (false:
      // wrapping switched off); true only trims the bar to the terminal's width.
      hideCursor: false,
      linewrap: true,
      gracefulExit: false,
    });
    live.add(this);
    this.shown.set(key, this.bars.create(s.total, s.done, payload));
    this.bars.update();
  }

  /** Whether loop `key`'s bar is shown. */
  has(key: string): boolean {
    return this.shown.has(key);
  }

  /** A line above the bars (or plainly, when none is shown). */
  log(line: string): void {
    if (!this.bars) {
      this.stream.write(line + '\n');
      return;
    }
    this.bars.log(line + '\n');
    this.bars.update();
  }

  /** Remove every bar (before an error is printed, or at exit). */
  stop(): void {
    this.bars?.stop();
    this.bars = null;
    this.shown.clear();
    live.delete(this);
  }

  private finish(key: string, line: string): void {
    const shown = this.shown.get(key);
    if (shown) {
      this.shown.delete(key);
      if (this.shown.size === 0) this.stop();
      else this.bars?.remove(shown);
    }
    this.log(line);
  }
}

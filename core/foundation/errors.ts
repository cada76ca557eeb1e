/** One error type for everything the user can act on: what went wrong and what to do about it. */
export class ForesightError extends Error {
  override readonly name = 'ForesightError';
  /** What to do about it, shown after the message. */
  readonly remedy: string;
  /** True when an upstream service or the environment failed, not the pipeline's own logic. */
  readonly external: boolean;

  constructor(message: string, opts: { remedy: string; external?: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.remedy = opts.remedy;
    this.external = opts.external ?? false;
  }

  /** One line: cause, then remedy. */
  oneLine(): string {
    return `${this.message} — ${this.remedy}`;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof ForesightError) return err.oneLine();
  if (err instanceof Error) return err.message;
  return String(err);
}

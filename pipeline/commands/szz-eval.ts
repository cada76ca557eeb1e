import { resolve } from 'node:path';
import { createLogger } from '../../core/log.ts';
import { evaluateSzz, formatScores, readOracle, type SzzVariant } from '../../stages/szz/index.ts';

export interface SzzEvalOpts {
  clone: string;
  oracle: string;
  variant: string;
  limit?: number;
  concurrency: number;
}

/** `foresight szz-eval`: score SZZ variants on an oracle, print the table. */
export async function szzEval(o: SzzEvalOpts): Promise<void> {
  const variants: SzzVariant[] = o.variant === 'both' ? ['b-szz', 'foresight'] : [o.variant as SzzVariant];
  const oracle = (await readOracle(o.oracle)).slice(0, o.limit);
  const log = createLogger({});
  const results = [];
  for (const variant of variants) {
    results.push(await evaluateSzz({ clone: resolve(o.clone), oracle, variant, concurrency: o.concurrency, onProgress: (d, t) => log.progress(variant, d, t) }));
  }
  process.stdout.write(formatScores(results) + '\n');
}

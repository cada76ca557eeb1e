import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeAtomic } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint, type Fingerprint } from '../../core/foundation/fingerprint.ts';
import type { Answer, Judge, JudgeInput, JudgeProvider } from '../types.ts';
import { schemaOf } from './openai.ts';

/**
 * Answers kept on disk so a rerun with unchanged inputs sends no request. The key is a fingerprint of
 * everything that shapes an answer: provider, model, judge name and prompt version, the rendered prompt
 * and the JSON schema asked for. Only answers that were bought are stored (not rules answers, not failures).
 */
export function cachedProvider(inner: JudgeProvider, dir: string): JudgeProvider {
  return {
    name: inner.name,
    model: inner.model,
    async ask<V>(judge: Judge<V>, input: JudgeInput): Promise<Answer<V> | null> {
      const key = answerKey(inner, judge, input);
      const path = join(dir, judge.name, `${key}.json`);
      const hit = await read(path, key, judge);
      if (hit) return hit;

      const answer = await inner.ask(judge, input);
      if (answer && answer.calls > 0 && !answer.cached) {
        const entry: Entry = { key, provider: inner.name, model: inner.model, judge: judge.name, version: judge.version, value: answer.value, usage: answer.usage, calls: answer.calls };
        try {
          await writeAtomic(path, JSON.stringify(entry, null, 1) + '\n');
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          throw new ForesightError(`could not store an LLM answer in the answer cache ${dir}: ${why}`, {
            remedy: 'check free space and permissions of the data directory, then rerun',
            external: true,
            cause: err,
          });
        }
      }
      return answer;
    },
  };
}

export type AnswerKey = Fingerprint & { readonly __answer: true };

/** Fingerprint of every input of an answer (see cachedProvider). */
export function answerKey(provider: Pick<JudgeProvider, 'name' | 'model'>, judge: Judge<unknown>, input: JudgeInput): AnswerKey {
  const { system, user } = judge.prompt(input);
  return fingerprint('foresight-answer/1', provider.name, provider.model, judge.name, judge.version, system, user, schemaOf(judge)) as AnswerKey;
}

const EntrySchema = z.object({
  key: z.string(),
  provider: z.string(),
  model: z.string(),
  judge: z.string(),
  version: z.string(),
  value: z.unknown(),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }),
  calls: z.number().int().nonnegative(),
});
type Entry = z.infer<typeof EntrySchema>;

/** A stored answer, or null: missing, unreadable, another key's, or no longer valid for the judge's schema. */
async function read<V>(path: string, key: AnswerKey, judge: Judge<V>): Promise<Answer<V> | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const entry = EntrySchema.safeParse(json);
  if (!entry.success || entry.data.key !== key) return null;
  const value = judge.schema.safeParse(entry.data.value);
  if (!value.success) return null;
  // The usage is what the answer cost when it was bought; nothing was sent for it now.
  return { value: value.data, usage: entry.data.usage, calls: 0, cached: true };
}

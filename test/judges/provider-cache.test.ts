import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { clearSecrets } from '../../core/foundation/secrets.ts';
import { answerKey, cachedProvider } from '../../judges/providers/cache.ts';
import { openaiProvider } from '../../judges/providers/openai.ts';
import { makeProviders } from '../../judges/providers/registry.ts';
import { rulesProvider } from '../../judges/providers/rules.ts';
import type { Judge, JudgeInput } from '../../judges/types.ts';
import { useFakeOpenAI } from '../helpers/fake-openai.ts';
import { judgeInputFixture } from '../helpers/judge-input.ts';

const API_KEY = 'sk-test-cache-0c1d2e3f4a5b6c7d';

const schema = z.object({ reason: z.string(), verdict: z.enum(['yes', 'no']) });
type V = z.infer<typeof schema>;
const judge: Judge<V> = {
  name: 'eligibility',
  version: '1',
  schema,
  prompt: (input) => ({ system: 'Judge the chain. Reply in JSON.', user: `${input.instanceId}: ${input.problemStatement}` }),
  rules: (input) => (input.miningCategory === 'szz' ? null : { reason: 'rules', verdict: 'yes' }),
  passes: (v) => v.verdict === 'yes',
};

const input: JudgeInput = judgeInputFixture();
const good = JSON.stringify({ reason: 'a fix of PR1', verdict: 'yes' });

const fake = useFakeOpenAI();
let dir: string;
beforeEach(async () => {
  // A deterministic fake model: every request gets the same good answer.
  fake.setHandler(() => ({ content: good }));
  dir = await mkdtemp(join(tmpdir(), 'foresight-answers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const llm = (model = 'judge-m') => openaiProvider({ baseURL: fake.baseURL, apiKey: API_KEY, model, timeoutMs: 5_000, maxRetries: 0 });

async function files(): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.json')).sort();
}

describe('cachedProvider', () => {
  it('a second ask with the same input sends nothing and returns the stored answer with its original usage', async () => {
    const p = cachedProvider(llm(), dir);
    expect({ name: p.name, model: p.model }).toEqual({ name: 'openai-compatible', model: 'judge-m' });
    const first = await p.ask(judge, input);
    expect(first).toMatchObject({ value: { verdict: 'yes' }, calls: 1, cached: false });
    expect(first!.usage.prompt_tokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);

    const second = await cachedProvider(llm(), dir).ask(judge, input);
    expect(fake.requests).toHaveLength(1);
    expect(second).toEqual({ value: first!.value, usage: first!.usage, calls: 0, cached: true });
    expect(await files()).toEqual([join('eligibility', `${answerKey(p, judge, input)}.json`)]);
  });

  it('misses when the prompt version, the model, the input or the schema changes', async () => {
    await cachedProvider(llm(), dir).ask(judge, input);
    expect(fake.requests).toHaveLength(1);

    const misses = [
      () => cachedProvider(llm(), dir).ask({ ...judge, version: '2' }, input),
      () => cachedProvider(llm('other-model'), dir).ask(judge, input),
      () => cachedProvider(llm(), dir).ask(judge, { ...input, problemStatement: 'Parsing fails on blank input.' }),
      () => cachedProvider(llm(), dir).ask({ ...judge, schema: schema.extend({ note: z.string().optional() }) as never }, input),
    ];
    for (const [i, miss] of misses.entries()) {
      const a = await miss();
      expect(a, `change ${i}`).toMatchObject({ cached: false, calls: 1 });
      expect(fake.requests, `change ${i}`).toHaveLength(i + 2);
    }
  });

  it('a corrupt, foreign or no-longer-valid entry is a miss, and is replaced by the fresh answer', async () => {
    const p = cachedProvider(llm(), dir);
    await p.ask(judge, input);
    const path = join(dir, (await files())[0]!);
    const stored = JSON.parse(await readFile(path, 'utf8'));

    const bad = [
      '{"key": "trunc',
      JSON.stringify({ ...stored, key: 'f'.repeat(64) }), // another answer's entry under this name
      JSON.stringify({ ...stored, value: { reason: 'r', verdict: 'maybe' } }), // fails the judge's schema
      JSON.stringify({ ...stored, usage: undefined }),
    ];
    for (const [i, text] of bad.entries()) {
      await writeFile(path, text);
      expect(await p.ask(judge, input), `entry ${i}`).toMatchObject({ cached: false, calls: 1 });
      expect(JSON.parse(await readFile(path, 'utf8')), `entry ${i}`).toEqual(expect.objectContaining({ key: stored.key, value: stored.value }));
    }
    expect(fake.requests).toHaveLength(1 + bad.length);
    expect(await p.ask(judge, input)).toMatchObject({ cached: true });
  });

  it('does not cache a failure: the next ask is sent again', async () => {
    fake.setHandler(null);
    fake.enqueue({ refusal: 'no' }, { refusal: 'no' });
    const p = cachedProvider(llm(), dir);
    await expect(p.ask(judge, input)).rejects.toBeInstanceOf(ForesightError);
    expect(await files()).toEqual([]);
    fake.enqueue({ content: good });
    expect(await p.ask(judge, input)).toMatchObject({ cached: false, calls: 1 });
    expect(fake.requests).toHaveLength(3);
  });

  it('does not store rules answers (free), and passes a rules null through', async () => {
    const p = cachedProvider(rulesProvider(), dir);
    expect(await p.ask(judge, input)).toEqual({ value: { reason: 'rules', verdict: 'yes' }, usage: { prompt_tokens: 0, completion_tokens: 0 }, calls: 0, cached: false });
    expect(await p.ask(judge, { ...input, miningCategory: 'szz' })).toBeNull();
    expect(await files()).toEqual([]);
  });
});

describe('makeProviders with an answer cache', () => {
  const env = {
    FORESIGHT_LLM_BASE_URL: '',
    FORESIGHT_LLM_API_KEY: API_KEY,
    FORESIGHT_JUDGE_MODEL: 'judge-m',
    FORESIGHT_FAIRNESS_MODELS: 'fair-a,fair-b',
  };
  afterEach(() => clearSecrets());

  it('a rerun with unchanged inputs makes zero calls', async () => {
    const e = { ...env, FORESIGHT_LLM_BASE_URL: fake.baseURL };
    const run = async () => {
      const { main, fairness } = makeProviders(loadConfig(e), loadSecrets(e), { cacheDir: dir });
      return Promise.all([main, ...fairness].map((p) => p.ask(judge, input)));
    };
    const first = await run();
    expect(first.map((a) => a!.calls)).toEqual([1, 1, 1]);
    expect(fake.requests).toHaveLength(3);
    const again = await run();
    expect(fake.requests).toHaveLength(3);
    expect(again.map((a) => [a!.cached, a!.calls])).toEqual([
      [true, 0],
      [true, 0],
      [true, 0],
    ]);
    expect(again.map((a) => a!.usage)).toEqual(first.map((a) => a!.usage));
  });

  it('offline: rules providers, not wrapped, answer null where rules cannot judge', async () => {
    const { main, fairness } = makeProviders(loadConfig({}), loadSecrets({}), { cacheDir: dir });
    expect([main, ...fairness].map((p) => p.name)).toEqual(['rules', 'rules', 'rules']);
    expect(await main.ask(judge, { ...input, miningCategory: 'szz' })).toBeNull();
    expect(await main.ask(judge, input)).toMatchObject({ calls: 0, cached: false });
    expect(await files()).toEqual([]);
  });
});

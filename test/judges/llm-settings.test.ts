import { afterEach, describe, expect, it } from 'vitest';
import { llmSettings } from '../../judges/providers/config.ts';
import { loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { clearSecrets } from '../../core/foundation/secrets.ts';
import { makeProviders } from '../../judges/providers/registry.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { useFakeOpenAI } from '../helpers/fake-openai.ts';
import { API_KEY, expectNoKey, good, input, testJudge } from '../helpers/openai-test-judge.ts';

const fake = useFakeOpenAI();

describe('makeProviders: one queue per endpoint', () => {
  const env = (concurrency: number) => ({
    FORESIGHT_LLM_BASE_URL: fake.baseURL,
    FORESIGHT_LLM_API_KEY: API_KEY,
    FORESIGHT_JUDGE_MODEL: 'judge-m',
    FORESIGHT_FAIRNESS_MODELS: 'fair-a,fair-b',
    FORESIGHT_LLM_CONCURRENCY: String(concurrency),
  });
  afterEach(() => clearSecrets());

  /** Six asks at once, two per model, against a server that takes 150 ms per answer. */
  async function sixAtOnce(concurrency: number) {
    fake.setHandler(() => ({ content: good, delayMs: 150 }));
    const { main, fairness } = makeProviders(loadConfig(env(concurrency)), loadSecrets(env(concurrency)), { cacheDir: null });
    const asks = [main, ...fairness].flatMap((p) => [p.ask(testJudge, input), p.ask(testJudge, { ...input, instanceId: 'octo__repo-13' })]);
    const answers = await Promise.all(asks);
    expect(answers.map((a) => [a?.value.verdict, a?.calls])).toEqual(Array.from({ length: 6 }, () => ['yes', 1]));
    expect(new Set(fake.requests.map((r) => r.body.model))).toEqual(new Set(['judge-m', 'fair-a', 'fair-b']));
    return fake.maxInFlight();
  }

  it('with concurrency 2, the server never sees more than 2 requests in flight across the three models', async () => {
    expect(await sixAtOnce(2)).toBe(2);
  });

  it('(the same asks with concurrency 6 do run 6 at once, so the limit above is what held them)', async () => {
    expect(await sixAtOnce(6)).toBe(6);
  });
});

describe('LLM judge settings (config.judge + the API key)', () => {
  /** As the CLI does: one configuration from the environment, then the judge's settings from it. */
  const llmConfigFromEnv = (env: Record<string, string>) => llmSettings(loadConfig(env).judge, loadSecrets(env).llmApiKey);
  afterEach(() => clearSecrets());

  const full = {
    FORESIGHT_LLM_BASE_URL: 'https://llm.example.test/v1',
    FORESIGHT_LLM_API_KEY: API_KEY,
    FORESIGHT_JUDGE_MODEL: 'judge-a',
    FORESIGHT_FAIRNESS_MODELS: 'fair-a, fair-b',
  };

  function configError(env: Record<string, string>): ForesightError {
    try {
      llmConfigFromEnv(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ForesightError);
      const e = err as ForesightError;
      expect(e.remedy).toBeTruthy();
      expectNoKey(e);
      return e;
    }
    throw new Error('expected llmConfigFromEnv to throw');
  }

  it('returns null when no base URL is set', () => {
    expect(llmConfigFromEnv({})).toBeNull();
    expect(llmConfigFromEnv({ FORESIGHT_LLM_BASE_URL: '  ' })).toBeNull();
    expect(llmConfigFromEnv({ FORESIGHT_LLM_API_KEY: API_KEY })).toBeNull();
  });

  it('reads a full configuration', () => {
    expect(llmConfigFromEnv(full)).toEqual({
      baseURL: 'https://llm.example.test/v1',
      apiKey: API_KEY,
      judgeModel: 'judge-a',
      fairnessModels: ['fair-a', 'fair-b'],
    });
    expect(llmConfigFromEnv({ ...full, FORESIGHT_LLM_BASE_URL: 'http://127.0.0.1:8000/v1' })?.baseURL).toBe(
      'http://127.0.0.1:8000/v1',
    );
  });

  it('rejects a base URL without models', () => {
    const err = configError({ FORESIGHT_LLM_BASE_URL: full.FORESIGHT_LLM_BASE_URL, FORESIGHT_LLM_API_KEY: API_KEY });
    expect(err.message).toContain('FORESIGHT_JUDGE_MODEL');
    expect(err.message).toContain('FORESIGHT_FAIRNESS_MODELS');
    expect(err.remedy).toContain('FORESIGHT_JUDGE_MODEL');
  });

  it('rejects models without a base URL', () => {
    const { FORESIGHT_LLM_BASE_URL: _, ...rest } = full;
    const err = configError(rest);
    expect(err.message).toContain('FORESIGHT_LLM_BASE_URL');
  });

  it('rejects one fairness model, three, or two identical ones', () => {
    expect(configError({ ...full, FORESIGHT_FAIRNESS_MODELS: 'fair-a' }).message).toMatch(/exactly two/);
    expect(configError({ ...full, FORESIGHT_FAIRNESS_MODELS: 'a,b,c' }).message).toMatch(/exactly two/);
    expect(configError({ ...full, FORESIGHT_FAIRNESS_MODELS: 'fair-a, fair-a' }).message).toMatch(/distinct/);
    expect(configError({ ...full, FORESIGHT_FAIRNESS_MODELS: 'fair-a,' }).message).toMatch(/exactly two/);
  });

  it('rejects a base URL that is not http(s)', () => {
    for (const url of ['ftp://llm.example.test/v1', 'llm.example.test/v1', 'not a url']) {
      const err = configError({ ...full, FORESIGHT_LLM_BASE_URL: url });
      expect(err.message).toContain('FORESIGHT_LLM_BASE_URL');
      expect(err.remedy).toContain('FORESIGHT_LLM_BASE_URL');
    }
  });

  it('rejects a missing API key without leaking anything', () => {
    const { FORESIGHT_LLM_API_KEY: _, ...rest } = full;
    const err = configError(rest);
    expect(err.message).toContain('FORESIGHT_LLM_API_KEY');
    expect(err.remedy).toContain('FORESIGHT_LLM_API_KEY');
  });

  it('does not echo the API key when another setting is invalid', () => {
    configError({ ...full, FORESIGHT_JUDGE_MODEL: 'has spaces in it' });
  });
});

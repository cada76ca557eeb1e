import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { llmSettings } from '../../judges/providers/config.ts';
import { loadConfig, loadSecrets } from '../../core/config.ts';
import { clearSecrets } from '../../core/secrets.ts';
import { openaiProvider, type OpenAIProviderOptions } from '../../judges/providers/openai.ts';
import type { Judge, JudgeInput } from '../../judges/types.ts';
import { ForesightError } from '../../core/errors.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.ts';

const API_KEY = 'sk-test-SECRET-5f3a9c1e77b24d08';
const MODEL = 'judge-model-1';

const verdictSchema = z.object({ verdict: z.enum(['yes', 'no']), reason: z.string() });
type TestVerdict = z.infer<typeof verdictSchema>;

const testJudge: Judge<TestVerdict> = {
  name: 'eligibility',
  schema: verdictSchema,
  prompt: (input) => ({
    system: 'You judge chains. Answer with a JSON object {"verdict": "yes"|"no", "reason": string}.',
    user: `Instance ${input.instanceId}: ${input.problemStatement}`,
  }),
  rules: () => ({ verdict: 'yes', reason: 'rules' }),
  passes: (v) => v.verdict === 'yes',
};

const pr = { label: 'PR #1', title: 't', body: 'b', patch: '', testPatch: '' };
const input: JudgeInput = {
  instanceId: 'octo__repo-12',
  miningCategory: 'regression',
  problemStatement: 'Parsing fails on empty input.',
  pr1: pr,
  pr2: { ...pr, label: 'PR #2' },
  blame: { linesFromPr1: 3, linesFromOthers: 0, explicitReference: true },
};

const good = JSON.stringify({ verdict: 'yes', reason: 'clear fix chain' });

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

function provider(extra: Partial<OpenAIProviderOptions> = {}) {
  return openaiProvider({ baseURL: fake.baseURL, apiKey: API_KEY, model: MODEL, timeoutMs: 5_000, maxRetries: 1, ...extra });
}

async function caught(p: Promise<unknown>): Promise<ForesightError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ForesightError);
  return err as ForesightError;
}

function expectNoKey(err: ForesightError) {
  for (const text of [err.message, err.remedy, err.oneLine(), String(err), inspect(err, { depth: 10 })]) {
    expect(text).not.toContain(API_KEY);
  }
}

describe('openaiProvider', () => {
  it('sends the judge prompt with temperature 0 and JSON mode, and returns the parsed verdict', async () => {
    fake.enqueue({ content: good });
    const p = provider();
    expect(p.name).toBe('openai-compatible');
    expect(p.model).toBe(MODEL);

    await expect(p.ask(testJudge, input)).resolves.toEqual({ verdict: 'yes', reason: 'clear fix chain' });

    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const { system, user } = testJudge.prompt(input);
    expect(req.body).toMatchObject({
      model: MODEL,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    expect(req.body.messages).toHaveLength(2);
  });

  it('accepts a verdict inside a ```json fence', async () => {
    fake.enqueue({ content: 'Here you go:\n```json\n{"verdict": "no", "reason": "unrelated"}\n```' });
    await expect(provider().ask(testJudge, input)).resolves.toEqual({ verdict: 'no', reason: 'unrelated' });
    expect(fake.requests).toHaveLength(1);
  });

  it('mentions JSON in the system prompt when the judge prompt does not (JSON mode requires it)', async () => {
    const plainJudge: Judge<TestVerdict> = { ...testJudge, prompt: () => ({ system: 'You judge.', user: 'Is it a chain?' }) };
    fake.enqueue({ content: good });
    await provider().ask(plainJudge, input);
    expect(fake.requests[0]!.body.messages[0].content).toMatch(/^You judge\.\n\n.*JSON/);
  });

  it('waits for retry-after on 429, then succeeds', async () => {
    fake.enqueue(
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached', type: 'requests' } } },
      { content: good },
    );
    const start = Date.now();
    await expect(provider().ask(testJudge, input)).resolves.toEqual({ verdict: 'yes', reason: 'clear fix chain' });
    expect(Date.now() - start).toBeGreaterThanOrEqual(950);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries a 500, then succeeds', async () => {
    fake.enqueue({ status: 500, body: { error: { message: 'upstream exploded' } } }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toEqual({ verdict: 'yes', reason: 'clear fix chain' });
    expect(fake.requests).toHaveLength(2);
  });

  it('asks again, quoting the error, when the reply is not JSON', async () => {
    fake.enqueue({ content: 'yes, this looks like a chain' }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toEqual({ verdict: 'yes', reason: 'clear fix chain' });
    expect(fake.requests).toHaveLength(2);
    const messages = fake.requests[1]!.body.messages as { role: string; content: string }[];
    expect(messages).toHaveLength(4);
    expect(messages[2]).toEqual({ role: 'assistant', content: 'yes, this looks like a chain' });
    expect(messages[3]!.role).toBe('user');
    expect(messages[3]!.content).toContain('not valid JSON');
    expect(messages[3]!.content).toContain('yes, this looks like a chain');
    expect(fake.requests[1]!.body).toMatchObject({ model: MODEL, temperature: 0, response_format: { type: 'json_object' } });
  });

  it('asks again when the JSON misses the schema, quoting the zod issue', async () => {
    fake.enqueue({ content: JSON.stringify({ verdict: 'maybe', reason: 'x' }) }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toEqual({ verdict: 'yes', reason: 'clear fix chain' });
    const followUp = fake.requests[1]!.body.messages[3].content as string;
    expect(followUp).toContain('verdict');
    expect(followUp).toMatch(/does not match the verdict schema/);
  });

  it('throws a ForesightError naming judge, model and issue when the verdict is invalid twice', async () => {
    fake.enqueue({ content: JSON.stringify({ verdict: 'maybe' }) }, { content: JSON.stringify({ verdict: 'maybe' }) });
    const err = await caught(provider().ask(testJudge, input));
    expect(fake.requests).toHaveLength(2);
    expect(err.message).toContain('eligibility');
    expect(err.message).toContain(MODEL);
    expect(err.message).toMatch(/verdict: /);
    expect(err.message).toMatch(/reason: /);
    expect(err.remedy).toBeTruthy();
  });

  it('treats an empty / cut-off reply as unusable', async () => {
    fake.enqueue({ content: null }, { content: '{"verdict": "yes", "rea', finishReason: 'length' });
    const err = await caught(provider().ask(testJudge, input));
    expect(fake.requests[1]!.body.messages[3].content).toContain('empty');
    expect(err.message).toContain('cut off');
  });

  it('maps 401 to a key error that never shows the key, in errors or in the client log', async () => {
    vi.stubEnv('OPENAI_LOG', 'debug');
    const lines: string[] = [];
    for (const level of ['debug', 'info', 'warn', 'error', 'log'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    }
    fake.enqueue({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
    const err = await caught(provider({ maxRetries: 2 }).ask(testJudge, input));
    expect(fake.requests).toHaveLength(1); // 401 is not retried
    expect(err.message).toContain('the LLM endpoint rejected the API key');
    expect(err.remedy).toContain('FORESIGHT_LLM_API_KEY');
    expect(err.external).toBe(false);
    expectNoKey(err);
    expect(lines.length).toBeGreaterThan(0); // the client did log (debug level)
    for (const line of lines) expect(line).not.toContain(API_KEY);
  });

  it('keeps the key out of other upstream errors that echo it', async () => {
    fake.enqueue({ status: 400, body: { error: { message: `bad request for key ${API_KEY}` } } });
    const err = await caught(provider().ask(testJudge, input));
    expect(err.message).toContain('HTTP 400');
    expectNoKey(err);
  });

  it('throws an external ForesightError with the status when retries are exhausted', async () => {
    fake.enqueue(
      { status: 503, body: { error: { message: 'overloaded' } } },
      { status: 503, body: { error: { message: 'overloaded' } } },
    );
    const err = await caught(provider({ maxRetries: 1 }).ask(testJudge, input));
    expect(fake.requests).toHaveLength(2);
    expect(err.external).toBe(true);
    expect(err.message).toContain('503');
    expect(err.message).toContain('overloaded');
    expect(err.remedy).toMatch(/endpoint/);
    expectNoKey(err);
  });

  it('throws an external rate-limit ForesightError when 429 persists', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after-ms': '10' }, body: {} }, { status: 429, body: {} });
    const err = await caught(provider({ maxRetries: 1 }).ask(testJudge, input));
    expect(fake.requests).toHaveLength(2);
    expect(err.external).toBe(true);
    expect(err.message).toContain('429');
    expect(err.remedy).toMatch(/rate limit/);
  });

  it('throws an external ForesightError on timeout and on an unreachable endpoint', async () => {
    fake.enqueue({ content: good, delayMs: 2_000 });
    const timeout = await caught(provider({ timeoutMs: 200, maxRetries: 0 }).ask(testJudge, input));
    expect(timeout.external).toBe(true);
    expect(timeout.message).toContain('200 ms');

    // A port on 127.0.0.1 that was just closed: nothing listens there.
    const gone = await startFakeOpenAI();
    await gone.close();
    const refused = await caught(
      openaiProvider({ baseURL: gone.baseURL, apiKey: API_KEY, model: MODEL, maxRetries: 0 }).ask(testJudge, input),
    );
    expect(refused.external).toBe(true);
    expect(refused.remedy).toContain('FORESIGHT_LLM_BASE_URL');
    expectNoKey(refused);
  });

  it('uses a custom fetch when given one', async () => {
    fake.enqueue({ content: good });
    const spy = vi.fn<typeof fetch>((url, init) => fetch(url, init));
    await provider({ fetch: spy }).ask(testJudge, input);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('refuses an empty API key', () => {
    expect(() => openaiProvider({ baseURL: fake.baseURL, apiKey: '', model: MODEL })).toThrow(ForesightError);
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

import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Logger } from '../../core/foundation/log.ts';
import { openaiProvider, schemaOf, type OpenAIProviderOptions } from '../../judges/providers/openai.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { UnusableAnswerError } from '../../judges/errors.ts';
import { startFakeOpenAI, useFakeOpenAI } from '../helpers/fake-openai.ts';
import type { Judge } from '../../judges/types.ts';
import { API_KEY, expectNoKey, good, goodValue, input, MODEL, testJudge, type TestVerdict } from '../helpers/openai-test-judge.ts';

const fake = useFakeOpenAI();
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


/** A logger that records its lines. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (m: string) => void lines.push(m);
  const logger: Logger & { lines: string[] } = {
    lines,
    debug: log,
    info: log,
    warn: (m) => void lines.push(`warn: ${m}`),
    error: log,
    progress: () => {},
    note: () => {},
    setup: () => () => {},
    child: () => logger,
    toFile: () => {},
  };
  return logger;
}

describe('openaiProvider', () => {
  it("sends the judge prompt with temperature 0 and the judge's strict JSON schema, and returns the answer with its usage", async () => {
    fake.enqueue({ content: good, usage: { prompt_tokens: 120, completion_tokens: 17 } });
    const p = provider();
    expect(p.name).toBe('openai-compatible');
    expect(p.model).toBe(MODEL);

    await expect(p.ask(testJudge, input)).resolves.toEqual({
      value: goodValue,
      usage: { prompt_tokens: 120, completion_tokens: 17 },
      calls: 1,
      cached: false,
    });

    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const { system, user } = testJudge.prompt(input);
    expect(req.body).toMatchObject({
      model: MODEL,
      temperature: 0,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    expect(req.body.messages).toHaveLength(2);
    expect(req.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'eligibility',
        strict: true,
        schema: {
          type: 'object',
          properties: { reason: { type: 'string' }, verdict: { type: 'string', enum: ['yes', 'no'] } },
          required: ['reason', 'verdict'],
          additionalProperties: false,
        },
      },
    });
    // The reasoning field stays first, as the judge wrote it.
    expect(Object.keys(req.body.response_format.json_schema.schema.properties)).toEqual(['reason', 'verdict']);
  });

  it('fake usage is realistic: prompt tokens grow with the request', async () => {
    fake.enqueue({ content: good });
    const { usage } = (await provider().ask(testJudge, { ...input, problemStatement: 'x'.repeat(4000) }))!;
    expect(usage.prompt_tokens).toBeGreaterThan(1000);
    expect(usage.completion_tokens).toBeGreaterThan(5);
  });

  it('makes every schema strict: optional fields required but nullable, objects closed, bounds in words, no $schema', async () => {
    const schema = z.object({
      reasoning: z.string(),
      code: z.enum(['A', 'B1', 'B2']),
      clarity: z.number().int().min(0).max(3),
      count: z.int(),
      note: z.string().optional(),
      mechanism: z.string().nullable(),
      leaks: z.array(z.object({ token: z.string().min(1), where: z.string().optional() })),
      flag: z.boolean().default(false),
    });
    const judge: Judge<z.infer<typeof schema>> = { ...testJudge, name: 'labels', schema, passes: () => true } as never;
    const sent = schemaOf(judge);
    expect(JSON.stringify(sent)).not.toMatch(/"\$schema"|"default":|"minLength":|"minimum":|"maximum":|9007199254740991/);
    expect(sent).toEqual({
      type: 'object',
      properties: {
        reasoning: { type: 'string' },
        code: { type: 'string', enum: ['A', 'B1', 'B2'] },
        clarity: { type: 'integer', description: '(minimum 0, maximum 3)' },
        count: { type: 'integer' },
        note: { type: ['string', 'null'] },
        mechanism: { type: ['string', 'null'] },
        leaks: {
          type: 'array',
          items: {
            type: 'object',
            properties: { token: { type: 'string', description: '(minLength 1)' }, where: { type: ['string', 'null'] } },
            required: ['token', 'where'],
            additionalProperties: false,
          },
        },
        flag: { type: 'boolean' },
      },
      required: ['reasoning', 'code', 'clarity', 'count', 'note', 'mechanism', 'leaks', 'flag'],
      additionalProperties: false,
    });

    // A model under strict mode answers null for an optional field: that is its absence, not an error.
    const reply = { reasoning: 'r', code: 'A', clarity: 1, count: 2, note: null, mechanism: null, leaks: [{ token: 'x', where: null }], flag: true };
    fake.enqueue({ content: JSON.stringify(reply) });
    const answer = await provider().ask(judge, input);
    expect(answer!.value).toEqual({ reasoning: 'r', code: 'A', clarity: 1, count: 2, mechanism: null, leaks: [{ token: 'x' }], flag: true });
    expect(fake.requests).toHaveLength(1);
  });

  it('refuses a schema strict mode cannot express, naming the judge', () => {
    const judge = { ...testJudge, schema: z.object({ reason: z.string(), counts: z.record(z.string(), z.number()) }) } as never;
    expect(() => schemaOf(judge)).toThrow(/eligibility judge's schema .*free keys/);
  });

  it('accepts a verdict inside a ```json fence', async () => {
    fake.enqueue({ content: 'Here you go:\n```json\n{"reason": "unrelated", "verdict": "no"}\n```' });
    expect((await provider().ask(testJudge, input))!.value).toEqual({ verdict: 'no', reason: 'unrelated' });
    expect(fake.requests).toHaveLength(1);
  });

  it('falls back to JSON mode with the schema in the prompt when the server rejects json_schema, and stays there', async () => {
    fake.setRejectJsonSchema(true);
    const log = recordingLogger();
    const p = provider({ log });
    const plainJudge: Judge<TestVerdict> = { ...testJudge, prompt: () => ({ system: 'You judge.', user: 'Is it a chain?' }) };

    fake.enqueue({ content: good, usage: { prompt_tokens: 50, completion_tokens: 9 } });
    const first = await p.ask(plainJudge, input);
    expect(first).toEqual({ value: goodValue, usage: { prompt_tokens: 50, completion_tokens: 9 }, calls: 2, cached: false });
    expect(fake.requests.map((r) => r.body.response_format.type)).toEqual(['json_schema', 'json_object']);
    const system = fake.requests[1]!.body.messages[0].content as string;
    // JSON mode needs the word JSON in the messages; the schema tells the model the shape.
    expect(system.startsWith('You judge.\n\n')).toBe(true);
    expect(system).toContain('JSON');
    expect(system).toContain(JSON.stringify(schemaOf(plainJudge)));
    expect(fake.requests[1]!.body.messages[1]).toEqual({ role: 'user', content: 'Is it a chain?' });

    fake.enqueue({ content: good }, { content: good });
    await p.ask(plainJudge, input);
    await p.ask(testJudge, input);
    expect(fake.requests.map((r) => r.body.response_format.type)).toEqual(['json_schema', 'json_object', 'json_object', 'json_object']);
    const warnings = log.lines.filter((l) => l.startsWith('warn:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/rejected JSON-schema structured outputs for model judge-model-1.*JSON mode/);
  });

  it('a 400 about something else is an error, not a fallback', async () => {
    fake.enqueue({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens" } } });
    const err = await caught(provider().ask(testJudge, input));
    expect(fake.requests).toHaveLength(1);
    expect(err.message).toContain('HTTP 400');
    expect(err.message).toContain('maximum context length');
  });

  it('waits for retry-after (seconds) on 429, then succeeds, counting both requests', async () => {
    fake.enqueue(
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached', type: 'requests' } } },
      { content: good },
    );
    const start = Date.now();
    const answer = await provider().ask(testJudge, input);
    expect(Date.now() - start).toBeGreaterThanOrEqual(950);
    expect(answer).toMatchObject({ value: goodValue, calls: 2 });
    expect(fake.requests).toHaveLength(2);
  });

  it('waits for retry-after-ms on 429 (longer than the default backoff of a first retry, at most 0.5 s)', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after-ms': '1200' }, body: { error: { message: 'slow down' } } }, { content: good });
    const start = Date.now();
    await expect(provider().ask(testJudge, input)).resolves.toMatchObject({ value: goodValue, calls: 2 });
    expect(Date.now() - start).toBeGreaterThanOrEqual(1150);
  });

  it('retries a 500, then succeeds', async () => {
    fake.enqueue({ status: 500, body: { error: { message: 'upstream exploded' } } }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toMatchObject({ value: goodValue, calls: 2 });
    expect(fake.requests).toHaveLength(2);
  });

  it('asks again, quoting the error, when the reply is not JSON, and sums the usage of both calls', async () => {
    fake.enqueue(
      { content: 'yes, this looks like a chain', usage: { prompt_tokens: 100, completion_tokens: 8 } },
      { content: good, usage: { prompt_tokens: 130, completion_tokens: 12 } },
    );
    await expect(provider().ask(testJudge, input)).resolves.toEqual({
      value: goodValue,
      usage: { prompt_tokens: 230, completion_tokens: 20 },
      calls: 2,
      cached: false,
    });
    expect(fake.requests).toHaveLength(2);
    const messages = fake.requests[1]!.body.messages as { role: string; content: string }[];
    expect(messages).toHaveLength(4);
    expect(messages[2]).toEqual({ role: 'assistant', content: 'yes, this looks like a chain' });
    expect(messages[3]!.role).toBe('user');
    expect(messages[3]!.content).toContain('not valid JSON');
    expect(messages[3]!.content).toContain('yes, this looks like a chain');
    expect(fake.requests[1]!.body).toMatchObject({ model: MODEL, temperature: 0, response_format: { type: 'json_schema' } });
  });

  it('asks again when the JSON misses the schema, quoting the zod issue', async () => {
    fake.enqueue({ content: JSON.stringify({ reason: 'x', verdict: 'maybe' }) }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toMatchObject({ value: goodValue });
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

  it('a refusal twice is an UnusableAnswerError quoting the refusal (recorded on the chain, not an endpoint failure)', async () => {
    fake.enqueue({ refusal: "I can't help with that." }, { refusal: "I can't help with that." });
    const err = await caught(provider().ask(testJudge, input));
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body.messages[3].content).toContain('the model refused');
    expect(err.message).toMatch(/eligibility judge's model judge-model-1 returned an unusable verdict twice: the model refused: "I can't help with that."/);
    expect(err).toBeInstanceOf(UnusableAnswerError);
    expect(err.remedy).toMatch(/FORESIGHT_JUDGE_MODEL/);
  });

  it('a refusal, then a verdict, is an answer', async () => {
    fake.enqueue({ refusal: 'no' }, { content: good });
    await expect(provider().ask(testJudge, input)).resolves.toMatchObject({ value: goodValue, calls: 2 });
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

  it('keeps the key out of the fallback warning when the rejection echoes it', async () => {
    fake.enqueue(
      { status: 400, body: { error: { message: `response_format json_schema is not supported (key ${API_KEY})` } } },
      { content: good },
    );
    const log = recordingLogger();
    await provider({ log }).ask(testJudge, input);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).not.toContain(API_KEY);
    expect(log.lines[0]).toContain('[redacted]');
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

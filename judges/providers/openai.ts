import { AsyncLocalStorage } from 'node:async_hooks';
import { inspect } from 'node:util';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type PQueue from 'p-queue';
import type { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { exponentialBackoff, withRetry } from '../../core/http/retry.ts';
import { UnusableAnswerError } from '../errors.ts';
import type { Logger } from '../../core/foundation/log.ts';
import type { Answer, Judge, JudgeInput, JudgeProvider, Usage } from '../types.ts';
import { dropOptionalNulls, SchemaError, strictJsonSchema, type JsonSchema } from './strict-schema.ts';

export interface OpenAIProviderOptions {
  /** OpenAI-compatible base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Per-request timeout (each attempt). Default 120 s. */
  timeoutMs?: number;
  /** Retries on 408/409/429/5xx, connection errors and timeouts, waiting as retry-after(-ms) says. Default 3. */
  maxRetries?: number;
  fetch?: typeof fetch;
  /**
   * Limits requests in flight; share one queue among every provider of an endpoint (registry.ts). A
   * request holds its slot through its retries, so a rate-limited endpoint is not hammered.
   */
  queue?: PQueue;
  /** Told once when the endpoint rejects JSON-schema structured outputs and JSON mode is used instead. */
  log?: Logger;
}

/** How the reply's shape is asked for: a strict JSON schema, or JSON mode with the schema in the prompt. */
type Mode = 'json_schema' | 'json_object';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RETRIES = 3;
/** Longest piece of upstream text (server error, model reply) quoted in an error message. */
const QUOTE_LIMIT = 300;

/** A judge provider backed by any endpoint speaking the OpenAI chat-completions protocol. */
export function openaiProvider(opts: OpenAIProviderOptions): JudgeProvider {
  const { apiKey, model } = opts;
  if (!apiKey) {
    throw new ForesightError('no API key given for the LLM endpoint', {
      remedy: 'set FORESIGHT_LLM_API_KEY (any non-empty value for a server without auth)',
    });
  }
  const redact = (text: string): string => text.split(apiKey).join('[redacted]');
  const endpoint = describeEndpoint(opts.baseURL);
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const baseFetch = opts.fetch ?? fetch;
  // Every HTTP attempt (retries included) counts as a call of the answer it serves.
  const attempts = new AsyncLocalStorage<{ requests: number }>();

  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey,
    timeout: timeoutMs,
    // Retries are ours (withRetry in complete): the SDK's would be a second retry loop with its own Retry-After reading.
    maxRetries: 0,
    fetch: (url, init) => {
      const counter = attempts.getStore();
      if (counter) counter.requests++;
      return baseFetch(url, init);
    },
    // Never pick up credentials or ids for api.openai.com from the environment and send them elsewhere.
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    logger: redactingLogger(redact),
  });

  let mode: Mode = 'json_schema';

  async function complete(judgeName: string, request: Request, counter: { requests: number }): Promise<Reply & { usage: Usage }> {
    const send = () =>
      attempts.run(counter, () =>
        withRetry(() => client.chat.completions.create({ model, temperature: 0, ...request }), {
          attempts: maxRetries + 1,
          // The SDK's waits: 0.5 s doubled per retry, at most 8 s, jittered.
          backoff: exponentialBackoff(500, { maxMs: 8_000, jitter: 0.25 }),
          retryable,
          onRetry: ({ error, attempt, delayMs }) =>
            opts.log?.debug(redact(`the LLM endpoint ${endpoint} failed (${error instanceof Error ? error.message : String(error)}); retry ${attempt}/${maxRetries} in ${delayMs} ms`)),
        }),
      );
    try {
      const res = await (opts.queue ? opts.queue.add(send) : send());
      const choice = res.choices?.[0];
      return {
        content: choice?.message?.content ?? null,
        refusal: choice?.message?.refusal ?? null,
        finishReason: choice?.finish_reason ?? null,
        usage: { prompt_tokens: res.usage?.prompt_tokens ?? 0, completion_tokens: res.usage?.completion_tokens ?? 0 },
      };
    } catch (err) {
      if (err instanceof APIError && rejectsJsonSchema(err) && request.response_format.type === 'json_schema') throw new JsonSchemaRejected(err);
      throw toForesightError(err, { judgeName, model, endpoint, maxRetries, timeoutMs, redact });
    }
  }

  /** One request in the current mode; a rejected JSON schema switches this provider to JSON mode for good. */
  async function completeInMode(
    judgeName: string,
    build: (mode: Mode) => Request,
    counter: { requests: number },
  ): Promise<Reply & { usage: Usage }> {
    try {
      return await complete(judgeName, build(mode), counter);
    } catch (err) {
      if (!(err instanceof JsonSchemaRejected)) throw err;
      if (mode === 'json_schema') {
        mode = 'json_object';
        opts.log?.warn(
          `the LLM endpoint ${endpoint} rejected JSON-schema structured outputs for model ${model} (${redact(quote(err.cause.message))}); ` +
            'using JSON mode with the schema in the prompt from now on',
        );
      }
      return complete(judgeName, build('json_object'), counter);
    }
  }

  return {
    name: 'openai-compatible',
    model,
    async ask<V>(judge: Judge<V>, input: JudgeInput): Promise<Answer<V>> {
      const { system, user } = judge.prompt(input);
      const schema = schemaOf(judge);
      const counter = { requests: 0 };
      const usage: Usage = { prompt_tokens: 0, completion_tokens: 0 };
      const followUps: Message[] = [];
      const build = (m: Mode): Request => ({
        messages: [{ role: 'system', content: m === 'json_schema' ? system : withSchema(system, schema) }, { role: 'user', content: user }, ...followUps],
        response_format:
          m === 'json_schema' ? { type: 'json_schema', json_schema: { name: judge.name, strict: true, schema } } : { type: 'json_object' },
      });
      const answer = async (): Promise<Parsed<V>> => {
        const reply = await completeInMode(judge.name, build, counter);
        usage.prompt_tokens += reply.usage.prompt_tokens;
        usage.completion_tokens += reply.usage.completion_tokens;
        const parsed = parseVerdict(reply, judge.schema);
        if (!parsed.ok) {
          followUps.push(
            { role: 'assistant', content: reply.content ?? '' },
            {
              role: 'user',
              content:
                `Your reply could not be used: ${parsed.issue}\n` +
                'Reply again with only a JSON object that satisfies the requested format, and nothing else.',
            },
          );
        }
        return parsed;
      };

      const first = await answer();
      if (first.ok) return { value: first.value, usage, calls: counter.requests, cached: false };
      const second = await answer();
      if (second.ok) return { value: second.value, usage, calls: counter.requests, cached: false };

      // Not an endpoint failure: the judge stage records it on the chain (judge_failed) and goes on.
      throw new UnusableAnswerError(
        redact(`the ${judge.name} judge's model ${model} returned an unusable verdict twice: ${second.issue}`),
        { remedy: 'use a model that follows JSON instructions (FORESIGHT_JUDGE_MODEL / FORESIGHT_FAIRNESS_MODELS), then rerun' },
      );
    },
  };
}

type Request = Pick<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, 'messages'> & {
  response_format: OpenAI.ResponseFormatJSONSchema | OpenAI.ResponseFormatJSONObject;
};

const schemas = new WeakMap<z.ZodType, JsonSchema>();

/** The strict JSON schema of a judge's verdict (what is sent, and part of the answer cache key). */
export function schemaOf(judge: Pick<Judge<unknown>, 'name' | 'schema'>): JsonSchema {
  try {
    let schema = schemas.get(judge.schema);
    if (!schema) schemas.set(judge.schema, (schema = strictJsonSchema(judge.schema, judge.name)));
    return schema;
  } catch (err) {
    const why = err instanceof SchemaError ? err.message : `the ${judge.name} judge's schema has no JSON schema: ${String(err)}`;
    throw new ForesightError(why, { remedy: `change the ${judge.name} judge's zod schema (judges/${judge.name}/)`, cause: err });
  }
}

/** JSON mode: the shape goes into the system prompt (and the word JSON, which JSON mode requires). */
function withSchema(system: string, schema: JsonSchema): string {
  return `${system}\n\nReply with a single JSON object, in this key order, that matches this JSON schema:\n${JSON.stringify(schema)}`;
}

/** What the SDK retried before its retries became ours: connection failures and timeouts, 408, 409, 429, 5xx, or as x-should-retry says. */
function retryable(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError) return true;
  if (!(err instanceof APIError) || err.status === undefined) return false;
  const told = err.headers?.get('x-should-retry');
  if (told === 'true' || told === 'false') return told === 'true';
  return err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500;
}

/** A server without structured outputs answers 400 (some 422) naming the parameter it does not know. */
function rejectsJsonSchema(err: APIError): boolean {
  return (err.status === 400 || err.status === 422) && /response_format|json_schema|not supported|unsupported/i.test(err.message);
}

class JsonSchemaRejected extends Error {
  constructor(override readonly cause: APIError) {
    super('json_schema rejected');
  }
}

interface Reply {
  content: string | null;
  refusal: string | null;
  finishReason: string | null;
}

type Parsed<V> = { ok: true; value: V } | { ok: false; issue: string };

/** Parse a reply as JSON (bare, or inside a ```json fence) and validate it against the judge's schema. */
export function parseVerdict<V>(reply: Reply, schema: z.ZodType<V>): Parsed<V> {
  const cutOff = reply.finishReason === 'length' ? ' (the reply was cut off at the token limit)' : '';
  if (reply.content === null || reply.content.trim() === '') {
    const why = reply.refusal ? `the model refused: ${quote(reply.refusal)}` : 'the reply was empty';
    return { ok: false, issue: why + cutOff };
  }
  let json: unknown;
  try {
    json = JSON.parse(unfence(reply.content));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, issue: `the reply is not valid JSON (${why})${cutOff}: ${quote(reply.content)}` };
  }
  const result = schema.safeParse(dropOptionalNulls(json, schema));
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issue: `the JSON does not match the verdict schema: ${describeIssues(result.error)}` };
}

function unfence(content: string): string {
  const text = content.trim();
  const fenced = /```(?:json|JSON)?[ \t]*\r?\n?([\s\S]*?)```/.exec(text);
  return fenced?.[1] !== undefined ? fenced[1].trim() : text;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}…` : flat);
}

/** Host (and path) of the endpoint without any userinfo, for error messages. */
function describeEndpoint(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
  } catch {
    return 'the configured LLM endpoint';
  }
}

function toForesightError(
  err: unknown,
  ctx: {
    judgeName: string;
    model: string;
    endpoint: string;
    maxRetries: number;
    timeoutMs: number;
    redact: (s: string) => string;
  },
): ForesightError {
  if (err instanceof ForesightError) return err;
  const { judgeName, model, endpoint, maxRetries, timeoutMs, redact } = ctx;
  const who = `${judgeName} judge, model ${model}, ${endpoint}`;
  const attempts = `${maxRetries + 1} attempt${maxRetries === 0 ? '' : 's'}`;
  const make = (message: string, remedy: string, external: boolean) =>
    new ForesightError(redact(message), { remedy, external });

  if (err instanceof APIConnectionTimeoutError) {
    return make(
      `the LLM endpoint did not answer within ${timeoutMs} ms (${who}; ${attempts})`,
      'check that FORESIGHT_LLM_BASE_URL is up and not overloaded, then rerun',
      true,
    );
  }
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return make(
      `could not connect to the LLM endpoint (${who}; ${attempts})${cause}`,
      'check FORESIGHT_LLM_BASE_URL and that the server is running',
      true,
    );
  }
  if (err instanceof APIError && err.status !== undefined) {
    const status = err.status;
    const detail = err.message ? `: ${quote(err.message)}` : '';
    if (status === 401) {
      return make(`the LLM endpoint rejected the API key (HTTP 401; ${who})`, 'set FORESIGHT_LLM_API_KEY to a valid key for this endpoint', false);
    }
    if (status === 403) {
      return make(
        `the LLM endpoint refused access (HTTP 403; ${who})${detail}`,
        'check that FORESIGHT_LLM_API_KEY may use this model',
        false,
      );
    }
    if (status === 404) {
      return make(
        `the LLM endpoint has no such model or route (HTTP 404; ${who})${detail}`,
        'check FORESIGHT_LLM_BASE_URL (usually ends in /v1) and the model names',
        false,
      );
    }
    if (status === 429) {
      return make(
        `the LLM endpoint kept rate-limiting requests (HTTP 429 after ${attempts}; ${who})${detail}`,
        'wait and rerun, lower the concurrency, or raise the rate limit of the API key',
        true,
      );
    }
    if (status >= 500 || status === 408 || status === 409) {
      return make(
        `the LLM endpoint failed (HTTP ${status} after ${attempts}; ${who})${detail}`,
        'check the LLM endpoint is healthy (FORESIGHT_LLM_BASE_URL), then rerun',
        true,
      );
    }
    return make(
      `the LLM endpoint rejected the request (HTTP ${status}; ${who})${detail}`,
      'check that the model supports chat completions with structured outputs or JSON mode (response_format json_schema / json_object)',
      false,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return make(`the LLM request failed (${who}): ${message}`, 'check the FORESIGHT_LLM_* settings, then rerun', false);
}

/** The client's logger (level from OPENAI_LOG), with the API key scrubbed from every line. */
function redactingLogger(redact: (s: string) => string) {
  const line = (args: unknown[]) =>
    redact(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 6, breakLength: Infinity }))).join(' '));
  return {
    error: (...args: unknown[]) => console.error(line(args)),
    warn: (...args: unknown[]) => console.warn(line(args)),
    info: (...args: unknown[]) => console.info(line(args)),
    debug: (...args: unknown[]) => console.debug(line(args)),
  };
}

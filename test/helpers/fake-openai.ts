import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { AddressInfo } from 'node:net';

/** One scripted answer. With `content`, the body is a real chat.completion carrying that message content. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body: an object is sent as JSON, a string as is. Ignored when `content` is given. */
  body?: unknown;
  /** Shortcut: answer 200 with a chat completion whose `choices[0].message.content` is this. */
  content?: string | null;
  /** Shortcut: answer 200 with a chat completion whose message is a refusal (content null). */
  refusal?: string;
  finishReason?: 'stop' | 'length' | 'content_filter';
  /** Token counts of a completion; by default about a token per 4 characters of request and reply. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Wait this long before answering (to exercise client timeouts). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: any;
}

/** Answers a request when the scripted queue is empty: a deterministic fake model. */
export type FakeHandler = (req: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>;

export interface FakeOpenAIOptions {
  handler?: FakeHandler;
  /** Answer 400 to `response_format: json_schema`, as servers without structured outputs do. */
  rejectJsonSchema?: boolean;
}

export interface FakeOpenAI {
  /** Base URL to give the client, ending in /v1. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** Append responses to the queue; each request takes the next one. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Forget recorded requests and any unused scripted responses. */
  reset(): void;
  /** Scripted responses not used yet. */
  pending(): number;
  /** Set (or with null, remove) the handler answering when the queue is empty. */
  setHandler(handler: FakeHandler | null): void;
  setRejectJsonSchema(reject: boolean): void;
  /** Most requests being answered at one time since the last reset. */
  maxInFlight(): number;
  close(): Promise<void>;
}

export function chatCompletion(
  content: string | null,
  opts: { model?: string; finishReason?: string; refusal?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {},
) {
  const usage = opts.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return {
    id: `chatcmpl-fake-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: opts.model ?? 'fake-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: opts.refusal ?? null },
        logprobs: null,
        finish_reason: opts.finishReason ?? 'stop',
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** About one token per four characters, as tokenizers average on English and code. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

const REJECT_JSON_SCHEMA = {
  error: {
    message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
    type: 'invalid_request_error',
    param: 'response_format',
    code: null,
  },
};

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 (random port) answering from a script, then
 * from `handler` when the script is used up.
 */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let handler = options.handler ?? null;
  let rejectJsonSchema = options.rejectJsonSchema ?? false;
  let inFlight = 0;
  let maxInFlight = 0;

  const send = (res: ServerResponse, status: number, headers: Record<string, string>, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'text/plain' : 'application/json';
    res.writeHead(status, { 'content-type': type, ...headers });
    res.end(text);
  };

  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => void inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep raw text
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);

      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        send(res, 404, {}, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
        return;
      }
      const parsed = (body ?? {}) as { model?: string; messages?: unknown; response_format?: { type?: string } };
      if (rejectJsonSchema && parsed.response_format?.type === 'json_schema') {
        send(res, 400, {}, REJECT_JSON_SCHEMA);
        return;
      }
      void Promise.resolve(queue.shift() ?? (handler ? handler(recorded) : undefined)).then(
        (next) => {
          if (!next) {
            send(res, 500, { 'x-should-retry': 'false' }, { error: { message: 'fake-openai: no scripted response left' } });
            return;
          }
          const answer = () => {
            if (next.content !== undefined || next.refusal !== undefined) {
              const content = next.content ?? null;
              const usage = next.usage ?? {
                prompt_tokens: tokens(JSON.stringify(parsed.messages ?? '')),
                completion_tokens: tokens(content ?? next.refusal ?? ''),
              };
              const opts = {
                ...(parsed.model ? { model: parsed.model } : {}),
                ...(next.finishReason ? { finishReason: next.finishReason } : {}),
                ...(next.refusal !== undefined ? { refusal: next.refusal } : {}),
                usage,
              };
              send(res, next.status ?? 200, next.headers ?? {}, chatCompletion(content, opts));
            } else {
              send(res, next.status ?? 200, next.headers ?? {}, next.body ?? {});
            }
          };
          if (next.delayMs) {
            const t = setTimeout(() => {
              timers.delete(t);
              if (!res.destroyed) answer();
            }, next.delayMs);
            timers.add(t);
          } else {
            answer();
          }
        },
        (err: unknown) => send(res, 500, { 'x-should-retry': 'false' }, { error: { message: `fake-openai handler failed: ${String(err)}` } }),
      );
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      handler = options.handler ?? null;
      rejectJsonSchema = options.rejectJsonSchema ?? false;
      maxInFlight = inFlight;
    },
    pending: () => queue.length,
    setHandler: (h) => void (handler = h),
    setRejectJsonSchema: (reject) => void (rejectJsonSchema = reject),
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * A fake server for the whole test file: started before its tests, closed after them, its script and
 * recorded requests cleared before each test. The returned object stands for the server once started.
 */
export function useFakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  let fake: FakeOpenAI | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI(options);
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => fake?.reset());
  return new Proxy({} as FakeOpenAI, {
    get(_target, key) {
      if (!fake) throw new Error('useFakeOpenAI: the server starts in beforeAll; read it inside a test or hook');
      const value: unknown = Reflect.get(fake, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(fake) : value;
    },
  });
}

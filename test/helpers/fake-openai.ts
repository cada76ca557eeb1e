import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer. With `content`, the body is a real chat.completion carrying that message content. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body: an object is sent as JSON, a string as is. Ignored when `content` is given. */
  body?: unknown;
  /** Shortcut: answer 200 with a chat completion whose `choices[0].message.content` is this. */
  content?: string | null;
  finishReason?: 'stop' | 'length' | 'content_filter';
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
  close(): Promise<void>;
}

export function chatCompletion(content: string | null, opts: { model?: string; finishReason?: string } = {}) {
  return {
    id: `chatcmpl-fake-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: opts.model ?? 'fake-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: opts.finishReason ?? 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** An OpenAI-compatible chat-completions server on 127.0.0.1 (random port) answering from a script. */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, status: number, headers: Record<string, string>, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'text/plain' : 'application/json';
    res.writeHead(status, { 'content-type': type, ...headers });
    res.end(text);
  };

  const server = createServer((req, res) => {
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
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });

      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        send(res, 404, {}, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
        return;
      }
      const next = queue.shift();
      if (!next) {
        send(res, 500, { 'x-should-retry': 'false' }, { error: { message: 'fake-openai: no scripted response left' } });
        return;
      }
      const answer = () => {
        const model = (body as { model?: string } | null)?.model;
        if (next.content !== undefined) {
          const opts = { ...(model ? { model } : {}), ...(next.finishReason ? { finishReason: next.finishReason } : {}) };
          send(res, next.status ?? 200, next.headers ?? {}, chatCompletion(next.content, opts));
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
    },
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

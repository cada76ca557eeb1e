import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadSecrets } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { clearSecrets, redact } from '../../core/secrets.ts';

// Fake values, built so no scanner mistakes this file for one holding a real token.
const SECRETS = {
  GITHUB_TOKEN: ['ghp', 'Gh1TokenValue0123456789'].join('_'),
  FORESIGHT_LLM_API_KEY: 'sk-llm-Key-9876543210',
  HF_TOKEN: 'hf_HuggingFaceTok3n42',
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'foresight-log-'));
});
afterEach(async () => {
  clearSecrets();
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('redact', () => {
  it('replaces the value of every secret variable with its name', () => {
    const text = `gh=${SECRETS.GITHUB_TOKEN} llm=${SECRETS.FORESIGHT_LLM_API_KEY} hf=${SECRETS.HF_TOKEN} again=${SECRETS.GITHUB_TOKEN}`;
    loadSecrets(SECRETS);
    const out = redact(text);
    for (const v of Object.values(SECRETS)) expect(out).not.toContain(v);
    expect(out).toBe('gh=<GITHUB_TOKEN> llm=<FORESIGHT_LLM_API_KEY> hf=<HF_TOKEN> again=<GITHUB_TOKEN>');
  });

  it('the credentials of a URL are secrets too, even URL-encoded', () => {
    loadSecrets({ FORESIGHT_GIT_URL: 'https://bot:s3cr3t%2Fpass@git.example.org' });
    expect(redact('fatal: could not read https://bot:s3cr3t%2Fpass@git.example.org/a/b.git')).not.toContain('s3cr3t');
    expect(redact('password s3cr3t/pass')).toBe('password <FORESIGHT_GIT_URL credentials>');
  });

  it('leaves text alone when no secret is set', () => {
    expect(redact(`gh=${SECRETS.GITHUB_TOKEN}`)).toBe(`gh=${SECRETS.GITHUB_TOKEN}`);
  });
});

describe('logger', () => {
  it('a logger writing to a file never writes a secret from the environment', async () => {
    loadSecrets(SECRETS);
    const file = join(dir, 'foresight.log.jsonl');
    const log = createLogger({ quiet: true, file, level: 'debug' });
    const child = log.child({ stage: 'judge', endpoint: `https://x:${SECRETS.FORESIGHT_LLM_API_KEY}@127.0.0.1/v1` });

    log.info(`cloning with token ${SECRETS.GITHUB_TOKEN}`);
    log.debug('request', { headers: { authorization: `Bearer ${SECRETS.FORESIGHT_LLM_API_KEY}` } });
    child.warn(`upload to hub with ${SECRETS.HF_TOKEN} failed`);
    child.error('request failed');
    child.progress(`pushing with ${SECRETS.HF_TOKEN}`, 1, 2);

    const text = await readFile(file, 'utf8');
    for (const v of Object.values(SECRETS)) expect(text).not.toContain(v);
    // The lines are still there, with the secret replaced by its name.
    expect(text).toContain('cloning with token <GITHUB_TOKEN>');
    expect(text).toContain('Bearer <FORESIGHT_LLM_API_KEY>');
    expect(text).toContain('<HF_TOKEN> failed');
    // Every line stays valid JSON after redaction.
    for (const line of text.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('a secret with characters JSON escapes (quote, backslash) is still redacted in the file', async () => {
    const key = 'pa"ss\\word-123';
    loadSecrets({ FORESIGHT_LLM_API_KEY: key });
    const file = join(dir, 'log.jsonl');
    createLogger({ quiet: true, file }).info(`using key ${key}`);
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text.trim()).msg).toBe('using key <FORESIGHT_LLM_API_KEY>');
  });

  it('the terminal line is redacted too', () => {
    loadSecrets({ GITHUB_TOKEN: SECRETS.GITHUB_TOKEN });
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    createLogger().warn(`bad token ${SECRETS.GITHUB_TOKEN}`);
    expect(written.join('')).toContain('bad token <GITHUB_TOKEN>');
    expect(written.join('')).not.toContain(SECRETS.GITHUB_TOKEN);
  });
});

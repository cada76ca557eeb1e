import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, loadSecrets, NO_SECRETS } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { clearSecrets, containsSecret, redact } from '../../core/foundation/secrets.ts';
import { emitStage } from '../../stages/emit/index.ts';

function error(fn: () => unknown): ForesightError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ForesightError);
    return err as ForesightError;
  }
  throw new Error('expected a ForesightError');
}

afterEach(() => clearSecrets());

describe('loadConfig: one configuration from flags, environment and defaults', () => {
  it('defaults without any setting', () => {
    const c = loadConfig({});
    expect(c).toEqual(defaultConfig());
    expect(c.validate).toMatchObject({ runs: 3, jobs: 1, timeoutSec: 600, memoryMiB: 2048, pidsLimit: 512, cpus: 1 });
    expect(c.images).toEqual({ cache: 'env', envKeep: 30, baseAlias: 'foresight-base:bookworm', lockDir: null, registry: null, evalHistory: 'full' });
    expect(c.judge.provider).toBe('rules');
  });

  it("FORESIGHT_RECIPES: 'shipped' by default, 'detect' ignores recipe files; anything else is refused", () => {
    expect(loadConfig({}).validate.recipes).toBe('shipped');
    expect(loadConfig({ FORESIGHT_RECIPES: 'detect' }).validate.recipes).toBe('detect');
    expect(() => loadConfig({ FORESIGHT_RECIPES: 'none' })).toThrow(/FORESIGHT_RECIPES/);
  });

  it("the bisection's budget: FORESIGHT_BISECT_MAX_PROBES / _GOOD_END_PROBES, 28 and 16 by default; a good-end budget above the whole is refused", () => {
    expect(loadConfig({}).validate).toMatchObject({ bisectMaxProbes: 28, bisectGoodEndProbes: 16 });
    expect(loadConfig({ FORESIGHT_BISECT_MAX_PROBES: '32', FORESIGHT_BISECT_GOOD_END_PROBES: '20' }).validate).toMatchObject({ bisectMaxProbes: 32, bisectGoodEndProbes: 20 });
    expect(error(() => loadConfig({ FORESIGHT_BISECT_GOOD_END_PROBES: '0' })).message).toContain('FORESIGHT_BISECT_GOOD_END_PROBES=0');
    const e = error(() => loadConfig({ FORESIGHT_BISECT_GOOD_END_PROBES: '30' }));
    expect(e.message).toBe("the bisection's good-end probes (30) exceed its probes in all (28)");
    expect(e.remedy).toContain('FORESIGHT_BISECT_MAX_PROBES');
  });

  it('flags win over the environment', () => {
    const c = loadConfig({ FORESIGHT_JOBS: '4', FORESIGHT_RUNS: '2', FORESIGHT_SINCE: '2020-01-01' }, { jobs: '2', since: '2023-05-01' });
    expect(c.validate.jobs).toBe(2);
    expect(c.validate.runs).toBe(2);
    expect(c.discover.since).toBe('2023-05-01T00:00:00.000Z');
  });

  it('a date that does not exist (2024-02-30) is refused, not rolled over to March', () => {
    const e = error(() => loadConfig({}, { since: '2024-02-30' }));
    expect(e.message).toBe('--since 2024-02-30 is not a date');
    expect(e.remedy).toContain('--since');
  });

  it('a bare number (1) is not a date', () => {
    expect(error(() => loadConfig({ FORESIGHT_UNTIL: '1' })).message).toBe('FORESIGHT_UNTIL=1 is not a date');
    expect(error(() => loadConfig({}, { until: '2023-13-01' })).message).toContain('--until 2023-13-01');
    expect(loadConfig({}, { since: '2023-01-01T12:30:00Z' }).discover.since).toBe('2023-01-01T12:30:00.000Z');
  });

  it('since after until is an empty window, refused instead of mining nothing silently', () => {
    const e = error(() => loadConfig({}, { since: '2024-01-01', until: '2023-01-01' }));
    expect(e.message).toContain('the window is empty');
    expect(error(() => loadConfig({}, { since: '2024-01-01', until: '2024-01-01' })).message).toContain('not before');
  });

  it('a bad flag is named as the flag, a bad variable as the variable', () => {
    const flag = error(() => loadConfig({}, { jobs: 'abc' }));
    expect(flag.message).toBe('--jobs abc is not a whole number ≥ 1');
    expect(flag.message + flag.remedy).not.toContain('FORESIGHT_JOBS');
    expect(flag.remedy).toContain('--jobs');
    const env = error(() => loadConfig({ FORESIGHT_JOBS: '0' }));
    expect(env.message).toBe('FORESIGHT_JOBS=0 is not a whole number ≥ 1');
    expect(error(() => loadConfig({ FORESIGHT_CPUS: '-1' })).message).toContain('FORESIGHT_CPUS=-1');
    expect(error(() => loadConfig({ FORESIGHT_IMAGE_CACHE: 'all' })).message).toContain('one of none, base, env');
    expect(error(() => loadConfig({ FORESIGHT_GITHUB_API_URL: 'ftp://x' })).message).toContain('FORESIGHT_GITHUB_API_URL');
  });

  it('FORESIGHT_REGISTRY / --registry: HOST[:PORT]/NAMESPACE, the flag winning, a trailing slash dropped', () => {
    expect(loadConfig({ FORESIGHT_REGISTRY: '127.0.0.1:5000/foresight' }).images.registry).toBe('127.0.0.1:5000/foresight');
    expect(loadConfig({ FORESIGHT_REGISTRY: 'ghcr.io/org/team' }, { registry: 'localhost:5000/ns/' }).images.registry).toBe('localhost:5000/ns');
    for (const ok of ['registry.example.org/a.b/c_d/e-f', 'localhost/ns', 'Host.Example.org:443/a__b']) {
      expect(loadConfig({}, { registry: ok }).images.registry).toBe(ok);
    }
    // It changes what emit writes, so it is part of the configuration (fingerprinted).
    expect(fingerprint(loadConfig({}, { registry: 'localhost:5000/a' }))).not.toBe(fingerprint(loadConfig({}, { registry: 'localhost:5000/b' })));
  });

  it('a registry that is not HOST[:PORT]/NAMESPACE is refused, naming the flag or the variable', () => {
    const flag = error(() => loadConfig({ FORESIGHT_REGISTRY: '127.0.0.1:5000/ok' }, { registry: '127.0.0.1:5000/Upper' }));
    expect(flag.message).toBe('--registry 127.0.0.1:5000/Upper is not a registry with a lowercase namespace (a-z, 0-9, and . _ - between them)');
    expect(flag.remedy).toContain('--registry HOST[:PORT]/NAMESPACE');
    expect(flag.message + flag.remedy).not.toContain('FORESIGHT_REGISTRY');
    const env = error(() => loadConfig({ FORESIGHT_REGISTRY: 'http://127.0.0.1:5000/ns' }));
    expect(env.message).toBe('FORESIGHT_REGISTRY=http://127.0.0.1:5000/ns is not HOST[:PORT]/NAMESPACE (without http:// or https://)');
    expect(env.remedy).toContain('FORESIGHT_REGISTRY');
    // Without a dot, a port or localhost Docker would read the host as a Docker Hub namespace.
    expect(error(() => loadConfig({}, { registry: 'myhost/ns' })).message).toContain('a registry host');
    expect(error(() => loadConfig({}, { registry: '127.0.0.1:5000' })).message).toBe('--registry 127.0.0.1:5000 is not HOST[:PORT]/NAMESPACE');
    expect(error(() => loadConfig({}, { registry: '127.0.0.1:99999/ns' })).message).toContain('port in 1..65535');
    for (const badValue of ['127.0.0.1:5000/a//b', '127.0.0.1:5000/-a', '127.0.0.1:5000/a--', 'a_b.org/ns', '127.0.0.1:5000/a b', '[::1]:5000/ns', `h.org/${'a'.repeat(250)}`]) {
      expect(error(() => loadConfig({}, { registry: badValue })).message).toContain(`--registry ${badValue} is not`);
    }
  });

  it('FORESIGHT_EVAL_HISTORY picks the eval images\' git store, and emit reruns when it changes (no row naming a stale image)', () => {
    expect(loadConfig({ FORESIGHT_EVAL_HISTORY: 'depth1' }).images.evalHistory).toBe('depth1');
    expect(loadConfig({ FORESIGHT_EVAL_HISTORY: ' full ' }).images.evalHistory).toBe('full');
    const bad = error(() => loadConfig({ FORESIGHT_EVAL_HISTORY: 'shallow' }));
    expect(bad.message).toBe('FORESIGHT_EVAL_HISTORY=shallow is not one of full, depth1');
    expect(bad.remedy).toBe('set FORESIGHT_EVAL_HISTORY to full or unset it');
    const emitFingerprint = (env: Record<string, string>): string => fingerprint(emitStage.config(loadConfig(env)));
    expect(emitFingerprint({ FORESIGHT_EVAL_HISTORY: 'depth1' })).not.toBe(emitFingerprint({}));
    expect(emitFingerprint({ FORESIGHT_EVAL_HISTORY: 'full' })).toBe(emitFingerprint({}));
  });

  it('the LLM judges: a JSON price table, concurrency and repair rounds; a bad table is refused naming its shape', () => {
    const c = loadConfig({ FORESIGHT_LLM_PRICES: '{"m-a":{"prompt":0.15,"completion":0.6}}', FORESIGHT_LLM_CONCURRENCY: '8', FORESIGHT_MAX_REPAIRS: '0' });
    expect(c.judge).toMatchObject({ prices: { 'm-a': { prompt: 0.15, completion: 0.6 } }, concurrency: 8, maxRepairs: 0 });
    expect(loadConfig({}).judge).toMatchObject({ prices: {}, concurrency: 4, maxRepairs: 2 });
    for (const bad of ['{"m":{"prompt":"cheap"}}', 'not json', '{"m":{"prompt":1,"completion":-1}}']) {
      const err = error(() => loadConfig({ FORESIGHT_LLM_PRICES: bad }));
      expect(err.message).toContain('is not a JSON price table');
      expect(err.remedy).toContain('USD per million tokens');
    }
    expect(error(() => loadConfig({ FORESIGHT_LLM_CONCURRENCY: '0' })).message).toContain('FORESIGHT_LLM_CONCURRENCY=0');
  });

  it('a registry with credentials is refused without echoing them', () => {
    const e = error(() => loadConfig({ FORESIGHT_REGISTRY: 'user:s3cret-reg@127.0.0.1:5000/ns' }));
    expect(e.message).toContain('FORESIGHT_REGISTRY');
    expect(e.message + e.remedy).not.toContain('s3cret-reg');
  });

  it('an LLM model named without an endpoint is refused rather than silently judged by rules', () => {
    expect(error(() => loadConfig({ FORESIGHT_JUDGE_MODEL: 'm' })).message).toContain('FORESIGHT_LLM_BASE_URL is not');
  });

  it('publish: HF_ENDPOINT (trailing slash dropped, a non-URL refused by name) and FORESIGHT_PY_VENV; HF_TOKEN only in Secrets', () => {
    expect(loadConfig({}).publish).toEqual({ hfEndpoint: 'https://huggingface.co', pyVenv: '.venv-test' });
    const hfToken = ['hf', 'cfgTestTok3n0123456789'].join('_');
    const env = { HF_ENDPOINT: 'http://127.0.0.1:8080/', FORESIGHT_PY_VENV: '/opt/py', HF_TOKEN: hfToken };
    const c = loadConfig(env);
    expect(c.publish).toEqual({ hfEndpoint: 'http://127.0.0.1:8080', pyVenv: '/opt/py' });
    expect(JSON.stringify(c)).not.toContain(hfToken);
    expect(loadSecrets(env).hfToken).toBe(hfToken);
    const bad = error(() => loadConfig({ HF_ENDPOINT: 'huggingface.co' }));
    expect(bad.message).toBe('HF_ENDPOINT=huggingface.co is not an http(s) URL');
  });
});

describe('secrets: kept out of the configuration and redacted by value', () => {
  const TOKEN = ['ghp', 'cfgTestTok3n0123456789'].join('_');

  it('no secret is part of the configuration, so none is ever fingerprinted', () => {
    const env = { GITHUB_TOKEN: TOKEN, FORESIGHT_LLM_API_KEY: 'sk-cfg-test-key-42', FORESIGHT_GIT_URL: 'https://u:pw-cfg-secret@git.example.org' };
    const c = loadConfig(env);
    const s = loadSecrets(env);
    expect(s).toMatchObject({ githubToken: TOKEN, llmApiKey: 'sk-cfg-test-key-42', gitUrlCredentials: 'u:pw-cfg-secret' });
    const text = JSON.stringify(c);
    for (const v of [TOKEN, 'sk-cfg-test-key-42', 'pw-cfg-secret']) expect(text).not.toContain(v);
    // A change of token changes no stage's configuration fingerprint.
    expect(fingerprint(loadConfig({ ...env, GITHUB_TOKEN: ['ghp', 'other0123456789'].join('_') }))).toBe(fingerprint(c));
    expect(containsSecret(`x ${TOKEN} y`)).toBe(true);
    expect(redact(`token ${TOKEN}`)).toBe('token <GITHUB_TOKEN>');
  });

  it('NO_SECRETS carries none', () => {
    expect(Object.values(NO_SECRETS).every((v) => v === null)).toBe(true);
  });
});

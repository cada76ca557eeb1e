/** The registry a Node image's deps step reaches (npm-sources.ts): the host's npm configuration, or the configuration's registry and token. */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clearSecrets, redact } from '../../../core/foundation/secrets.ts';
import { nerfDart, npmSources, tokenFor } from '../../../core/env/image/npm-sources.ts';

describe("the registry the deps step reaches (npm-sources.ts, the host's npm configuration)", () => {
  it('nerf darts and tokens as npm matches them', () => {
    expect(nerfDart('https://registry.npmjs.org/')).toBe('//registry.npmjs.org/');
    expect(nerfDart('https://npm.example.com:8443/repo/npm')).toBe('//npm.example.com:8443/repo/npm/');
    const rc = ['//npm.example.com/repo/:_authToken="${NPM_TOKEN}"', '//other.example.com/:_authToken=plain-token-1', '; comment'].join('\n');
    expect(tokenFor(rc, 'https://npm.example.com/repo/npm/', { NPM_TOKEN: 'tok-from-env-123' })).toBe('tok-from-env-123');
    expect(tokenFor(rc, 'https://npm.example.com/repo/npm/', {})).toBeNull();
    expect(tokenFor(rc, 'https://other.example.com/', {})).toBe('plain-token-1');
    expect(tokenFor(rc, 'https://registry.npmjs.org/', {})).toBeNull();
  });

  it('registry, CA bundle and token reach only the exec variables; the token is redacted everywhere else', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'foresight-npmrc-'));
    try {
      const ca = path.join(dir, 'ca.pem');
      await writeFile(ca, '-----BEGIN CERTIFICATE-----\n');
      await chmod(ca, 0o644);
      const rc = path.join(dir, 'npmrc');
      await writeFile(rc, '//npm.example.com/:_authToken=${FORESIGHT_TEST_NPM_TOKEN}\n');
      const npm = async () => `registry=https://npm.example.com/\ncafile=${ca}\nuserconfig=${rc}\nglobalconfig=/nonexistent/npmrc\n`;
      const s = await npmSources({ npm, env: { FORESIGHT_TEST_NPM_TOKEN: 'secret-npm-token-4242' } });
      expect(s.registry).toBe('https://npm.example.com/');
      expect(s.binds).toEqual([`${ca}:/foresight-npm-ca.pem:ro`]);
      expect(s.env).toEqual([
        'FORESIGHT_NPM_REGISTRY=https://npm.example.com/',
        'FORESIGHT_NPM_TOKEN=secret-npm-token-4242',
        'NODE_EXTRA_CA_CERTS=/foresight-npm-ca.pem',
        'npm_config_cafile=/foresight-npm-ca.pem',
      ]);
      expect(s.notes.join('\n')).not.toContain('secret-npm-token-4242');
      expect(redact('npm error 401 for secret-npm-token-4242')).toBe('npm error 401 for <npm registry token>');
    } finally {
      clearSecrets();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the configuration's registry and token win over the host's; the host npmrc's token is the fallback; no token in the notes", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'foresight-npmrc-'));
    try {
      const rc = path.join(dir, 'npmrc');
      await writeFile(rc, ['//npm.example.com/:_authToken=host-token-for-example-7777', '//npm.mirror.test/repo/:_authToken=host-token-for-mirror-8888'].join('\n'));
      const calls: string[][] = [];
      const npm = async (args: string[]) => {
        calls.push(args);
        return `registry=https://npm.example.com/\nuserconfig=${rc}\nglobalconfig=/nonexistent/npmrc\n`;
      };
      const tokenOf = (s: { env: string[] }) => s.env.find((e) => e.startsWith('FORESIGHT_NPM_TOKEN='))?.slice('FORESIGHT_NPM_TOKEN='.length) ?? null;

      // The host alone: its registry, its npmrc's token for it.
      const host = await npmSources({ npm, env: {} });
      expect(host.registry).toBe('https://npm.example.com/');
      expect(tokenOf(host)).toBe('host-token-for-example-7777');
      expect(host.notes).toContain("npm registry from the host's npm (npm config get registry)");

      // The configured registry wins; the host npmrc's token for that registry is the fallback token.
      const reg = await npmSources({ npm, env: {}, registry: 'https://npm.mirror.test/repo/' });
      expect(reg.registry).toBe('https://npm.mirror.test/repo/');
      expect(reg.env[0]).toBe('FORESIGHT_NPM_REGISTRY=https://npm.mirror.test/repo/');
      expect(tokenOf(reg)).toBe('host-token-for-mirror-8888');
      expect(reg.notes).toContain('npm registry from the configuration (FORESIGHT_NPM_REGISTRY)');
      expect(reg.notes.join('\n')).toContain(`from ${rc}`);

      // The configured token wins over the npmrc's, and is redacted from then on.
      const both = await npmSources({ npm, env: {}, registry: 'https://npm.mirror.test/repo/', token: 'configured-npm-token-9999' });
      expect(tokenOf(both)).toBe('configured-npm-token-9999');
      expect(both.env.filter((e) => e.startsWith('FORESIGHT_NPM_TOKEN='))).toHaveLength(1);
      expect(both.notes.join('\n')).toContain('npm token for //npm.mirror.test/repo/ from the configuration (FORESIGHT_NPM_TOKEN): passed to the deps step only');
      expect(both.notes.join('\n')).not.toContain(rc);
      expect(redact('401 for configured-npm-token-9999')).toBe('401 for <npm registry token>');

      // A configured token with the host's registry; no token anywhere in the notes.
      const tok = await npmSources({ npm, env: {}, token: 'configured-npm-token-9999' });
      expect(tok.registry).toBe('https://npm.example.com/');
      expect(tokenOf(tok)).toBe('configured-npm-token-9999');
      for (const s of [host, reg, both, tok]) {
        const notes = s.notes.join('\n');
        for (const t of ['host-token-for-example-7777', 'host-token-for-mirror-8888', 'configured-npm-token-9999']) expect(notes).not.toContain(t);
      }
      // The host's npm is still asked (CA bundle, npmrc files) when the registry is configured.
      expect(calls).toHaveLength(4);
    } finally {
      clearSecrets();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

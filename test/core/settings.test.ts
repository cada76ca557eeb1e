import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { envSetting, loadConfig, loadSecrets, SECRET_VARS } from '../../core/foundation/config.ts';
import { clearSecrets } from '../../core/foundation/secrets.ts';
import { COMMANDS, documentedSettings, flagsFor, longFlag, settingRows, type Setting } from '../../core/foundation/settings.ts';
import { buildCli } from '../../pipeline/commands/cli.ts';
import { ROOT_HELP } from '../../pipeline/commands/help.ts';
import { README, readmeSection, settingsMarkdown } from '../../scripts/settings-doc.ts';

afterEach(() => clearSecrets());

const word = (name: string): RegExp => new RegExp(`(^|[^\\w-])${name.replace(/[-[\]]/g, '\\$&')}(?![\\w-])`);

describe('the settings table', () => {
  it('each row is whole: a variable or flag with its parser and a one-line doc; a secret has no place in Config', () => {
    for (const [path, s] of settingRows()) {
      expect(s.doc, path).not.toMatch(/\n/);
      expect(s.doc.length, `${path}: a long explanation belongs in the README's prose`).toBeLessThanOrEqual(200);
      if (s.secret) {
        expect(path, path).toMatch(/^secrets\./);
        expect(s.schema, path).toBeUndefined();
        expect(s.env, path).toBeDefined();
      } else {
        expect(s.schema, path).toBeDefined();
        if (s.env !== undefined || (s.flag && !('sets' in s.flag))) expect(s.parse, `${path} reads text, so it needs a parser`).toBeDefined();
      }
    }
    const envs = settingRows().flatMap(([, s]) => (s.env ? [s.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
  });

  it('loadConfig and loadSecrets read exactly the variables the table lists', () => {
    const read = new Set<string>();
    const env = new Proxy({} as Record<string, string | undefined>, {
      get: (_t, name) => {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    });
    loadConfig(env);
    loadSecrets(env);
    const listed = settingRows().flatMap(([, s]) => [...(s.env ? [s.env] : []), ...(s.redactAlso ?? [])]);
    expect([...read].filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !read.has(name))).toEqual([]);
    expect(SECRET_VARS).toEqual(expect.arrayContaining(['GITHUB_TOKEN', 'GH_TOKEN', 'HF_TOKEN', 'FORESIGHT_LLM_API_KEY', 'OPENAI_API_KEY']));
  });

  it("a command's options reach the configuration only when the table gives it the flag", () => {
    // szz-eval's own --concurrency (blame jobs) is not the worker's.
    const opts = { concurrency: 3, jobs: '2', data: 'd', clone: '/x' };
    expect(flagsFor('szz-eval', opts)).toEqual({ jobs: '2', data: 'd' });
    expect(flagsFor('worker', { concurrency: '3', jobs: '2' })).toEqual({ concurrency: '3' });
    expect(loadConfig({}, flagsFor('summary', { jobs: '9', data: 'd' }))).toMatchObject({ data: 'd', validate: { jobs: 1 } });
  });

  it('FORESIGHT_DEBUG is read on its own when the configuration cannot be (a bad value elsewhere)', () => {
    expect(() => loadConfig({ FORESIGHT_DEBUG: '1', FORESIGHT_JOBS: '0' })).toThrow(/FORESIGHT_JOBS=0/);
    expect(envSetting('debug.stack', { FORESIGHT_DEBUG: '1', FORESIGHT_JOBS: '0' })).toBe(true);
    expect(envSetting('debug.stack', {})).toBe(false);
    expect(envSetting('validate.jobs', { FORESIGHT_JOBS: 'x' })).toBe(1);
  });
});

describe('the docs are made from the table', () => {
  const documented: Array<[string, Setting]> = documentedSettings();

  it('--help names every variable', () => {
    const environment = ROOT_HELP.slice(ROOT_HELP.indexOf('Environment'));
    expect(documented.filter(([, s]) => s.env && !word(s.env).test(environment)).map(([p]) => p)).toEqual([]);
  });

  it("each command's --help shows the flags the table gives it, and no other setting's", () => {
    const program = buildCli();
    const missing: string[] = [];
    const extra: string[] = [];
    // Settings of a subcommand: `campaign` is `campaign run`'s, `campaign-emit` is `campaign emit`'s.
    const SUB: Record<string, [string, string]> = { campaign: ['campaign', 'run'], 'campaign-emit': ['campaign', 'emit'] };
    for (const name of COMMANDS) {
      const [top, sub] = SUB[name] ?? [name, null];
      const parent = program.commands.find((c) => c.name() === top);
      const command = sub === null ? parent : parent?.commands.find((c) => c.name() === sub);
      expect(command, name).toBeDefined();
      const help = command!.helpInformation();
      for (const [path, s] of documented) {
        if (!s.flag) continue;
        const long = longFlag(s.flag.spec);
        // A command may have its own option of the same name (szz-eval's --concurrency): the setting's names its variable.
        const shown = command!.options.some((o) => o.long === long && (!s.env || o.description.includes(s.env))) && word(long).test(help);
        if (s.flag.commands.includes(name) && !shown) missing.push(`${name} ${long} (${path})`);
        if (!s.flag.commands.includes(name) && shown) extra.push(`${name} ${long} (${path})`);
      }
    }
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    const summary = program.commands.find((c) => c.name() === 'summary')!.helpInformation();
    for (const flag of ['--jobs', '--queue', '--runs', '--since', '--offline']) expect(summary).not.toContain(flag);
  });

  it("README.md's settings section is what the table generates, and names every setting", async () => {
    const section = readmeSection(await readFile(README, 'utf8'));
    expect(section, 'README.md is stale: run node_modules/.bin/tsx scripts/settings-doc.ts --write').toBe(settingsMarkdown());
    const rows = section.split('\n').slice(2);
    expect(rows).toHaveLength(documented.length);
    for (const [i, [path, s]] of documented.entries()) {
      if (s.env) expect(rows[i], path).toContain(`\`${s.env}\``);
      if (s.flag) expect(rows[i], path).toContain(`\`${s.flag.spec}\``);
    }
  });
});

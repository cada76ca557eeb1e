/**
 * The database backend plug-ins (core/env/services/): the registry and the recipe field agree, each
 * service is well formed, and only a recipe naming a service gets a driver step in its env build (the
 * keys of every other recipe stay what they were).
 */
import { describe, expect, it } from 'vitest';
import { backendNames, backends, DEFAULT_BACKEND, getBackend, installScript, parseRecipe, RecipeSchema, SETTINGS_DIR } from '../../../../core/env/index.ts';
import { ForesightError } from '../../../../core/foundation/errors.ts';

describe('backend registry', () => {
  it('sqlite is the default and needs no service; every other backend is a well-formed service', () => {
    expect(DEFAULT_BACKEND).toBe('sqlite');
    expect(getBackend('sqlite').kind).toBe('none');
    expect(backendNames()).toEqual(['sqlite', 'postgresql', 'postgis', 'mysql']);
    for (const b of backends.values()) {
      if (b.kind === 'none') continue;
      expect(b.packages.length, b.name).toBeGreaterThan(0);
      expect(b.cmd.length && b.ready.length && b.drivers.length, b.name).toBeTruthy();
      expect(b.env['FORESIGHT_DB'], b.name).toBe(b.name);
      expect(b.env['FORESIGHT_DB_HOST'], b.name).toBe('db');
      expect(b.env['FORESIGHT_DB_PORT'], b.name).toBe(String(b.port));
      // Django's settings module: named by the env, importing the era's own test settings.
      const settings = b.env['FORESIGHT_DJANGO_SETTINGS']!;
      expect(Object.keys(b.settings), b.name).toEqual([`${settings}.py`]);
      expect(b.settings[`${settings}.py`], b.name).toContain('from test_sqlite import *');
    }
    expect(() => getBackend('oracle')).toThrow(ForesightError);
  });

  it('a recipe names backends in order; unknown, repeated or empty lists are refused with the field named', () => {
    expect(RecipeSchema.parse({ runner: 'pytest' }).backends).toEqual(['sqlite']);
    expect(RecipeSchema.parse({ runner: 'django', backends: ['sqlite', 'postgresql'] }).backends).toEqual(['sqlite', 'postgresql']);
    expect(() => parseRecipe(JSON.stringify({ runner: 'pytest', backends: ['oracle'] }), 'x.json')).toThrow(/field "backends\[0\]": must be one of: sqlite, postgresql, postgis, mysql/);
    expect(() => parseRecipe(JSON.stringify({ runner: 'pytest', backends: ['mysql', 'mysql'] }), 'x.json')).toThrow(/field "backends": must not name a backend twice/);
    expect(() => parseRecipe(JSON.stringify({ runner: 'pytest', backends: [] }), 'x.json')).toThrow(/field "backends"/);
  });

  it('driver_only_for_services: the env build installs a service backend\'s driver and settings; sqlite adds nothing', () => {
    const base = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'] });
    const plain = installScript(base);
    expect(installScript({ ...base, backends: ['sqlite'] })).toBe(plain);
    const pg = installScript({ ...base, backends: ['sqlite', 'postgresql'] });
    expect(pg).toContain("pip install 'psycopg2-binary' || pip install 'psycopg[binary]' || pip install 'psycopg'");
    expect(pg).toContain(`${SETTINGS_DIR}/foresight_postgresql.py`);
    expect(pg.indexOf('psycopg2-binary')).toBeGreaterThan(pg.indexOf('pip install -e .'));
    expect(installScript({ ...base, backends: ['mysql'] })).toContain("pip install 'PyMySQL'");
  });
});

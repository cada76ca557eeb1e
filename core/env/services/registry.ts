/**
 * The database backends a recipe may name (`backends`), in a typed map: `sqlite` (no service, the
 * default) and the sidecar services. A recipe's names are checked against this map's keys.
 */
import { ForesightError } from '../../foundation/errors.ts';
import { mysql } from './mysql.ts';
import { postgis, postgresql } from './postgresql.ts';
import type { Backend } from './types.ts';

export const DEFAULT_BACKEND = 'sqlite';

export const backends: ReadonlyMap<string, Backend> = new Map<string, Backend>([
  [DEFAULT_BACKEND, { kind: 'none', name: DEFAULT_BACKEND }],
  [postgresql.name, postgresql],
  [postgis.name, postgis],
  [mysql.name, mysql],
]);

export function backendNames(): [string, ...string[]] {
  return [...backends.keys()] as [string, ...string[]];
}

/** A registered backend (names are checked when the recipe is parsed: an unknown one is a bug here). */
export function getBackend(name: string): Backend {
  const b = backends.get(name);
  if (!b) throw new ForesightError(`unknown database backend "${name}"`, { remedy: `use one of: ${backendNames().join(', ')}` });
  return b;
}

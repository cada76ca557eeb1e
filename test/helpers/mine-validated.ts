/**
 * A generated repository mined through discover, szz, extract and validate as `make mine` does (offline,
 * one explicit image), and its validated chains read back through the schema.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_BASE_ALIAS } from '../../core/env/index.ts';
import { loadConfig } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/foundation/model/validated.ts';
import type { StageName } from '../../core/foundation/stage.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';

/** `env` adds to (or overrides) the defaults: offline, the bookworm base image, one run per state. */
export async function mineValidated(clone: string, dataRoot: string, name: string, env: Record<string, string> = {}): Promise<ValidatedChain[]> {
  const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS, FORESIGHT_RUNS: '1', ...env });
  for (const only of ['discover', 'szz', 'extract', 'validate'] as StageName[]) {
    await runPipeline({ dataRoot, repo: { name, clone }, config, log: silentLogger, only });
  }
  return readValidated(dataRoot, name);
}

/** The validated chains of `name` under `dataRoot`, read back through the schema. */
export async function readValidated(dataRoot: string, name: string): Promise<ValidatedChain[]> {
  const lines = (await readFile(join(dataRoot, name.replace('/', '__'), 'validate', 'items.jsonl'), 'utf8')).split('\n').filter(Boolean);
  return lines.map((l) => ValidatedChainSchema.parse(JSON.parse(l)));
}

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { processEnv, SECRET_VARS } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { containsSecret } from '../../core/foundation/secrets.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';

/**
 * The gate's second check: the files about to be uploaded load with the real Hugging Face `datasets`
 * library, through the card's `configs` as the hub loads them, in a Python found on this machine.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, signal?: AbortSignal): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, signal }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ code, stdout, stderr: stderr || (error && code === null ? error.message : '') });
    });
  });
}

/**
 * The environment Python gets: the process's, minus every variable holding a credential (HF_TOKEN,
 * GITHUB_TOKEN, a URL with a password...), offline, with a scratch HF_HOME so the user's cache is
 * neither read nor written.
 */
function pythonEnv(hfHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const named: readonly string[] = SECRET_VARS;
  for (const [k, v] of Object.entries(processEnv())) if (v !== undefined && !named.includes(k) && !containsSecret(v)) env[k] = v;
  return {
    ...env,
    HF_HOME: hfHome,
    HF_HUB_OFFLINE: '1',
    HF_DATASETS_OFFLINE: '1',
    HF_HUB_DISABLE_TELEMETRY: '1',
    HF_DATASETS_DISABLE_PROGRESS_BARS: '1',
    HF_HUB_DISABLE_PROGRESS_BARS: '1',
    PYTHONIOENCODING: 'utf-8',
    PYTHONDONTWRITEBYTECODE: '1',
  };
}

/** The candidates, in order: the venv scripts/setup-python.sh makes (FORESIGHT_PY_VENV), then python3 on PATH. */
export function pythonCandidates(pyVenv: string): string[] {
  return [join(resolve(PROJECT_ROOT, pyVenv), 'bin', 'python'), 'python3'];
}

/** The first candidate that imports `datasets` and `pyarrow`; a ForesightError naming the remedy when none does. */
export async function findDatasetsPython(pyVenv: string, signal?: AbortSignal): Promise<string> {
  const candidates = pythonCandidates(pyVenv);
  const scratch = await mkdtemp(join(tmpdir(), 'foresight-publish-py-'));
  try {
    for (const python of candidates) {
      // find_spec, not import: importing datasets takes seconds, and the loader imports it anyway.
      const probe = 'import importlib.util as u, sys; sys.exit(0 if u.find_spec("datasets") and u.find_spec("pyarrow") else 1)';
      const res = await run(python, ['-c', probe], pythonEnv(scratch), 60_000, signal);
      if (res.code === 0) return python;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  throw new ForesightError(`no Python here imports the Hugging Face datasets library (tried ${candidates.join(', ')}); publish checks that the dataset loads with it`, {
    remedy: `run \`bash ${join(PROJECT_ROOT, 'scripts', 'setup-python.sh')}\` (a venv with datasets and pyarrow; \`make publish\` runs it first), or set FORESIGHT_PY_VENV to a venv that has them`,
  });
}

/**
 * Loads every config the card declares, every split of it, and writes each row as a JSON line
 * {c: config, s: split, r: row} to the dump (the decoded cells: the secret scan reads them, since the
 * parquet pages are compressed). Prints a JSON summary as its last line.
 */
const LOADER = `
import json, sys
import datasets
root, dump = sys.argv[1], sys.argv[2]
configs = {}
with open(dump, "w", encoding="utf-8") as out:
    for config in datasets.get_dataset_config_names(root):
        splits = {}
        for split, ds in datasets.load_dataset(root, config).items():
            ids = []
            for row in ds:
                out.write(json.dumps({"c": config, "s": split, "r": row}, ensure_ascii=False, default=str) + "\\n")
                ids.append(row.get("instance_id"))
            splits[split] = {"rows": ds.num_rows, "instance_ids": ids}
        configs[config] = splits
print(json.dumps({"datasets": datasets.__version__, "configs": configs}))
`;

const LoadReportSchema = z.object({
  datasets: z.string(),
  configs: z.record(z.string(), z.record(z.string(), z.object({ rows: z.number().int(), instance_ids: z.array(z.string().nullable()) }))),
});
export type LoadReport = z.infer<typeof LoadReportSchema>;

export type LoadOutcome =
  | { kind: 'loaded'; report: LoadReport; dump: string }
  | { kind: 'failed'; detail: string };

/** The last line of Python's error output that says something (the exception), on one line. */
function lastWords(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = [...lines].reverse().find((l) => /Error|Exception/.test(l)) ?? lines.at(-1) ?? 'no output';
  return line.replace(/\s+/g, ' ').slice(0, 300);
}

/**
 * Load the staged dataset folder (exactly the files to upload) with `datasets`. The dump is written
 * into `work` (a folder the caller removes).
 */
export async function loadWithDatasets(opts: { python: string; dir: string; work: string; signal?: AbortSignal }): Promise<LoadOutcome> {
  const dump = join(opts.work, 'rows.jsonl');
  const hfHome = join(opts.work, 'hf-home');
  const res = await run(opts.python, ['-c', LOADER, opts.dir, dump], pythonEnv(hfHome), 30 * 60_000, opts.signal);
  opts.signal?.throwIfAborted();
  if (res.code !== 0) return { kind: 'failed', detail: lastWords(res.stderr || res.stdout) };
  const last = res.stdout.trim().split('\n').at(-1) ?? '';
  let json: unknown;
  try {
    json = JSON.parse(last);
  } catch {
    return { kind: 'failed', detail: `the loader printed no summary (${last.slice(0, 200) || 'nothing'})` };
  }
  const parsed = LoadReportSchema.safeParse(json);
  if (!parsed.success) return { kind: 'failed', detail: `the loader's summary has an unexpected shape (${parsed.error.issues[0]?.message ?? ''})` };
  return { kind: 'loaded', report: parsed.data, dump };
}

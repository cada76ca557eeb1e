import { connectDocker } from './core/env/index.ts';
import { silentLogger } from './core/foundation/log.ts';
import { defaultConfig } from './core/foundation/config.ts';
import { gradeLimits, runEval } from './pipeline/eval/index.ts';
const hf = process.argv[2]!;
const { report } = await runEval({ dataset: hf, split: 'verified', predictions: 'gold', jobs: 1, docker: connectDocker(), limits: gradeLimits(defaultConfig().validate), log: silentLogger, signal: new AbortController().signal });
for (const i of report.instances) console.log(JSON.stringify(i, null, 1).slice(0, 4000));

/**
 * A worker process for the queue tests: `tsx test/helpers/redis-worker.ts <redis-url> <data-dir> <name>`.
 * The test kinds plus every handler `foresight worker` registers, with short lock and stall intervals so a
 * SIGKILLed worker's job comes back within seconds. Prints `ready` once it takes jobs; SIGTERM: drain, exit 0.
 */
import { handlerRegistry, startQueueWorker } from '../../core/queue/index.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { loadConfig, NO_SECRETS } from '../../core/foundation/config.ts';
import { workerHandlers } from '../../pipeline/worker/index.ts';
import { TEST_HANDLERS } from './redis-kinds.ts';

const [url, dataDir, name] = process.argv.slice(2);
if (!url || !dataDir || !name) throw new Error('usage: redis-worker.ts <redis-url> <data-dir> <name>');
const worker = await startQueueWorker({
  url,
  handlers: handlerRegistry([...workerHandlers({ config: loadConfig(process.env), secrets: NO_SECRETS }), ...TEST_HANDLERS]),
  concurrency: 1,
  dataDir,
  log: createLogger({ level: 'info' }),
  name,
  lockDurationMs: 1_000,
  stalledIntervalMs: 500,
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});

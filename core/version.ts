import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (where package.json lives). */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const FORESIGHT_VERSION: string = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

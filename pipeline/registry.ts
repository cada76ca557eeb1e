import { discoverStage } from '../stages/discover/index.ts';
import { emitStage } from '../stages/emit/index.ts';
import { extractStage } from '../stages/extract/index.ts';
import { judgeStage } from '../stages/judge/index.ts';
import { szzStage } from '../stages/szz/index.ts';
import { validateStage } from '../stages/validate/index.ts';
import type { AnyStage, StageName } from '../core/foundation/stage.ts';

/** Every stage, by name, in pipeline order. */
export const STAGE_DEFS: ReadonlyMap<StageName, AnyStage> = new Map<StageName, AnyStage>([
  ['discover', discoverStage],
  ['szz', szzStage],
  ['extract', extractStage],
  ['validate', validateStage],
  ['judge', judgeStage],
  ['emit', emitStage],
]);

/** Moved to core/extract (validate's attribution re-extracts a chain for a new PR1): re-exported for extract's callers. */
export { collectedDataFiles, splitPatch, type SplitPatch } from '../../core/extract/split-patch.ts';

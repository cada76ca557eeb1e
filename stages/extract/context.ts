/** Moved to core/extract (validate's attribution re-extracts a chain for a new PR1): re-exported for extract's callers. */
export { contextCollector, type ContextCollector } from '../../core/extract/context.ts';

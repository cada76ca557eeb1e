import { gitSource } from './git/index.ts';
import type { Source } from './types.ts';

/** Every discovery source, by name. */
export const SOURCES: ReadonlyMap<string, Source> = new Map<string, Source>([[gitSource.name, gitSource]]);

export { releaseDir, runRelease, type ReleaseOptions, type ReleaseResult } from './run.ts';

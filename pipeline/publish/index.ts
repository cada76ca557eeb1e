/**
 * `foresight publish`: an emitted dataset to the Hugging Face hub, in one commit guarded by
 * its parent, after a gate.
 *  - select-files.ts       which files of the emitted folder are the dataset (README.md, release.json, data/, verified/, funnel/, plots/)
 *  - gate.ts               the gate: check-gold.ts, load-with-datasets.ts, scan-secrets.ts
 *  - read-remote.ts        the repository on the hub: exists?, head, files, upload modes (read-only); or as a local copy shows it
 *  - plan.ts               the exact operations (printed by --dry-run, which asks the hub only with --remote hub)
 *  - publish.ts            gate, plan, create, commit
 *  - hub-fetch.ts          429 retried, honouring Retry-After
 *  - hub-errors.ts         hub statuses and network failures mapped to one line with a remedy
 *  - command.ts            the CLI's entry
 */
export { publish, type PublishOptions, type PublishOutcome } from './publish.ts';
export { runPublishCommand, type PublishCliOptions } from './command.ts';
export { hubFetch, parseRetryAfter, type HubFetchOptions } from './hub-fetch.ts';
export { runGate, type GateOutcome, type GateRefusal } from './gate.ts';
export { formatPlan, type Plan, type RemoteSource } from './plan.ts';
export { askUploadModes, downloadRemote, readLocalCopy, readRemote, type HubTarget, type RemoteState } from './read-remote.ts';
export { DATASET_FOLDERS, selectFiles, type DatasetFile, type Selection } from './select-files.ts';

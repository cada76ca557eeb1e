export { cloneSource, loadCampaign, type Campaign, type CampaignRepo } from './file.ts';
export { campaignDir, campaignTable, readCampaignState, repoConfig, runCampaign, stateFile, type CampaignState, type RepoState } from './run.ts';
export { campaignDatasetDir, emitCampaign, funnelFromStats, idPrefixes } from './emit.ts';

/** The bisection's defaults; its probe budgets are also validate's settings (config.ts), which is why they live down here. */
export const BISECT_DEFAULTS = { windowDays: 365, maxProbes: 28, maxGoodEndProbes: 16, maxImportHalving: 8, confirmRuns: 2 } as const;

/** The bisection's probe budget, as BisectOptions names it. */
export interface BisectBudget {
  maxProbes: number;
  maxGoodEndProbes: number;
}

/** The budget validate's settings give (FORESIGHT_BISECT_MAX_PROBES, FORESIGHT_BISECT_GOOD_END_PROBES). */
export function bisectBudget(settings: { bisectMaxProbes: number; bisectGoodEndProbes: number }): BisectBudget {
  return { maxProbes: settings.bisectMaxProbes, maxGoodEndProbes: settings.bisectGoodEndProbes };
}

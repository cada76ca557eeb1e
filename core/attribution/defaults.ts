/** The bisection's defaults; the probe budgets are also validate's settings (core/config), which read them here. */
export const BISECT_DEFAULTS = { windowDays: 365, maxProbes: 28, maxGoodEndProbes: 16, maxImportHalving: 8, confirmRuns: 2 } as const;

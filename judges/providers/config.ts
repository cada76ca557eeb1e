import { z } from 'zod';
import type { Config } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';

/** Settings for the LLM judges; `null` from `llmSettings` means "use the offline rules provider". */
export interface LlmConfig {
  /** OpenAI-compatible base URL (http or https). */
  baseURL: string;
  apiKey: string;
  /** Model for the eligibility and attribution judges. */
  judgeModel: string;
  /** Two distinct models, one for each independent fairness judge. */
  fairnessModels: [string, string];
}

export const LLM_ENV = {
  baseURL: 'FORESIGHT_LLM_BASE_URL',
  apiKey: 'FORESIGHT_LLM_API_KEY',
  judgeModel: 'FORESIGHT_JUDGE_MODEL',
  fairnessModels: 'FORESIGHT_FAIRNESS_MODELS',
} as const satisfies Record<keyof LlmConfig, string>;

const modelName = z
  .string()
  .min(1, 'is not set')
  .regex(/^\S*$/, 'must be a model name without spaces');

const configSchema = z.object({
  baseURL: z
    .string()
    .min(1, 'is not set')
    .pipe(z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' })),
  apiKey: z.string().min(1, 'is not set (use any non-empty value for a server without auth)'),
  judgeModel: modelName,
  fairnessModels: z
    .array(modelName)
    .refine((models) => models.length === 2, {
      message: 'must name exactly two models, comma-separated',
      abort: true,
    })
    .refine((models) => new Set(models).size === models.length, {
      message: 'must name two distinct models (the two fairness judges are independent)',
    }),
});

const REMEDY: Record<keyof LlmConfig, string> = {
  baseURL: `set ${LLM_ENV.baseURL} to the endpoint's http(s) base URL, e.g. https://api.openai.com/v1, or unset it to use the offline rules`,
  apiKey: `set ${LLM_ENV.apiKey}`,
  judgeModel: `set ${LLM_ENV.judgeModel} to the model for the eligibility and attribution judges`,
  fairnessModels: `set ${LLM_ENV.fairnessModels} to two distinct models, e.g. "model-a,model-b"`,
};

/**
 * The LLM judge settings, from the one configuration (config.judge) and the API key (Secrets).
 * Returns `null` when no endpoint is configured (the caller uses the offline rules provider); throws a
 * ForesightError naming the variable to fix when the settings are partial or invalid.
 */
export function llmSettings(judge: Config['judge'], apiKey: string | null): LlmConfig | null {
  if (!judge.baseUrl) return null;
  const result = configSchema.safeParse({
    baseURL: judge.baseUrl,
    apiKey: apiKey ?? '',
    judgeModel: judge.model ?? '',
    fairnessModels: judge.fairnessModels,
  });
  if (result.success) {
    const { fairnessModels } = result.data;
    return { ...result.data, fairnessModels: [fairnessModels[0]!, fairnessModels[1]!] };
  }

  const problems = result.error.issues.map((issue) => {
    const field = issue.path[0] as keyof LlmConfig;
    return { field, text: `${LLM_ENV[field]} ${issue.message}` };
  });
  const first = problems[0]!;
  // Never echo the API key's value; the other fields are not secret.
  throw new ForesightError(`invalid LLM judge settings: ${problems.map((p) => p.text).join('; ')}`, {
    remedy: REMEDY[first.field],
  });
}

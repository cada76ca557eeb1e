import { ForesightError } from '../core/foundation/errors.ts';

/**
 * A model answered, but not usably (refused, empty, or off-schema after the retry). Unlike an endpoint
 * failure, asking again will not help: the judge stage records it on the chain instead of failing the run.
 */
export class UnusableAnswerError extends ForesightError {}

// Named domain errors. The HTTP layer maps each class to one status in one place (apps/api/src/http/problem.ts).

export interface FieldError {
  path: string;
  message: string;
}

export abstract class BatonError extends Error {
  override readonly name: string = this.constructor.name;
}

/** The request is well-formed but its content breaks a rule (400). */
export class ValidationError extends BatonError {
  constructor(
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }
}
/** No credentials, or bad, expired or revoked ones (401). */
export class UnauthenticatedError extends BatonError {}
/** Well-formed and allowed, but the world says no: e.g. git cannot reach the repository (422, with the reason). */
export class UnprocessableError extends BatonError {
  constructor(
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }
}
/** The caller may see the object but not do this to it (403). */
export class ForbiddenError extends BatonError {}
/** Unknown, or not visible to the caller (404). */
export class NotFoundError extends BatonError {}
/** State conflict or object in use (409). */
export class ConflictError extends BatonError {}
/** Too many attempts (429). */
export class RateLimitedError extends BatonError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
/** A dependency is down (503). */
export class UnavailableError extends BatonError {}
/**
 * Something a run references (its project, inventory or a credential) no longer exists when the run is
 * dispatched; the message names it. The executor finishes such a run `error` / `missing_input` (422 over HTTP).
 */
export class RunInputMissingError extends UnprocessableError {}

/** No AI provider is configured: every AI endpoint answers 503 `ai-not-configured` (the UI hides its buttons). */
export class AiNotConfiguredError extends UnavailableError {
  constructor() {
    super('no AI provider is configured: set BATON_AI_PROVIDER or PUT /v1/settings/ai');
  }
}

/**
 * The AI provider failed: down, too slow, an error status, or an answer that is not what was asked (502). The message
 * never holds the prompt; `providerStatus` is the provider's HTTP status when it answered one.
 */
export class AiProviderError extends BatonError {
  constructor(
    message: string,
    readonly providerStatus: number | null = null,
  ) {
    super(message);
  }
}

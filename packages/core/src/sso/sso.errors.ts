import type { SsoFailure } from '@baton/contracts';
import { UnauthenticatedError, UnavailableError } from '../common/errors.js';

/** A single sign-on that did not prove who the person is, or proved it but is refused (401, with a short reason). */
export class SsoError extends UnauthenticatedError {
  constructor(
    readonly reason: SsoFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The identity provider cannot be reached or is not ready yet (503); the sign-in may be tried again. */
export class SsoUnavailableError extends UnavailableError {
  readonly reason: SsoFailure = 'unavailable';
}

/** The short reason of any sign-in failure: anything not ours is the provider's answer being unusable. */
export function ssoFailureOf(err: unknown): SsoFailure {
  if (err instanceof SsoError) return err.reason;
  if (err instanceof UnavailableError) return 'unavailable';
  return 'provider_error';
}

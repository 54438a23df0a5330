// The host key policies an inventory (its hosts) or a project (its git server over SSH) can have, in words.
import type { HostKeyChecking } from '@baton/contracts';

export const HOST_KEY_CHECKING: Record<HostKeyChecking, { label: string; explain: string }> = {
  accept_new: {
    label: 'Accept new keys',
    explain: 'A host’s key is recorded the first time it is reached; a changed key is refused.',
  },
  strict: {
    label: 'Strict: stored keys only',
    explain: 'Only hosts with a stored key are reached; an unknown or changed key is refused.',
  },
  off: {
    label: 'Off: no checking',
    explain: 'Every key is accepted and nothing is recorded: a host can be impersonated unnoticed.',
  },
};

/** In the order the select offers them: the default first. */
export const HOST_KEY_CHECKING_ORDER: HostKeyChecking[] = ['accept_new', 'strict', 'off'];

export const DEFAULT_HOST_KEY_CHECKING: HostKeyChecking = 'accept_new';

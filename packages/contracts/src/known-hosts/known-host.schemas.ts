import { z } from 'zod';
import { Timestamp } from '../common/common.schemas.js';
import { knownHostNameProblem, parseKnownHosts, type KnownHostEntry } from './known-hosts-text.js';

/**
 * How ssh checks the host keys of an inventory's hosts (or a project's git server): `strict` only connects to hosts
 * whose key is stored; `accept_new` records a host's key on first contact and refuses a changed one; `off` checks
 * nothing (every key accepted, nothing recorded).
 */
export const HostKeyChecking = z
  .enum(['strict', 'accept_new', 'off'])
  .meta({ id: 'HostKeyChecking', description: 'strict: stored keys only; accept_new: record on first contact; off' });
export type HostKeyChecking = z.infer<typeof HostKeyChecking>;
export const DEFAULT_HOST_KEY_CHECKING: HostKeyChecking = 'accept_new';

/** The largest known_hosts text a PUT takes (about 5 000 ed25519 lines; the JSON body limit applies first anyway). */
export const MAX_KNOWN_HOSTS_CHARS = 512 * 1024;

/** known_hosts text checked line by line: a bad line is a 400 naming its line number. */
function knownHostsText() {
  return z
    .string()
    .max(MAX_KNOWN_HOSTS_CHARS)
    .superRefine((text, ctx) => {
      const { problems } = parseKnownHosts(text);
      for (const p of problems.slice(0, 20)) ctx.addIssue({ code: 'custom', message: `line ${p.line}: ${p.message}` });
    });
}

export const KnownHostsReplaceBody = z
  .strictObject({
    known_hosts: knownHostsText().meta({
      description:
        'OpenSSH known_hosts lines (`host key-type base64-key`, as ssh-keyscan prints them); every entry becomes pinned and replaces all stored keys. An empty string clears them.',
    }),
  })
  .meta({ id: 'KnownHostsReplaceBody' });
export type KnownHostsReplaceBody = z.infer<typeof KnownHostsReplaceBody>;

export const KnownHostPinBody = z
  .strictObject({
    // Checked against the host of the path by the service (bare key lines need it).
    keys: z.string().min(1).max(MAX_KNOWN_HOSTS_CHARS).meta({
      description:
        'the host’s public keys: known_hosts lines naming this host, or bare `key-type base64-key` lines (a .pub file); they replace its stored keys and are pinned',
    }),
  })
  .meta({ id: 'KnownHostPinBody' });
export type KnownHostPinBody = z.infer<typeof KnownHostPinBody>;

export const KnownHostParam = z
  .string()
  .superRefine((v, ctx) => {
    const problem = knownHostNameProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ description: 'a host as ssh names it: `name`, or `[name]:port`' });

export const KnownHost = z
  .object({
    host: z.string(),
    key_type: z.string(),
    key: z.string(),
    fingerprint: z.string().meta({ example: 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU' }),
    source: z
      .enum(['recorded', 'pinned'])
      .meta({ description: 'recorded: seen on first contact by a run (accept_new); pinned: given by a user' }),
    run_id: z.string().nullable().meta({ description: 'the run that recorded it' }),
    created_by: z.string().nullable().meta({ description: 'who pinned it' }),
    created_at: Timestamp,
  })
  .meta({ id: 'KnownHost' });
export type KnownHost = z.infer<typeof KnownHost>;

export const KnownHostList = z
  .object({
    host_key_checking: HostKeyChecking,
    items: z.array(KnownHost),
  })
  .meta({ id: 'KnownHostList' });
export type KnownHostList = z.infer<typeof KnownHostList>;

/** What a bundle carries for ssh: the policy and the stored keys. */
export const BundleHostKeys = z.object({
  checking: HostKeyChecking,
  known_hosts: z.string(),
});
export type BundleHostKeys = z.infer<typeof BundleHostKeys>;

/** Keys ssh recorded during a run (accept_new), reported in the run's final status event. */
export type LearnedHostKeys = { inventory: KnownHostEntry[]; project: KnownHostEntry[] };

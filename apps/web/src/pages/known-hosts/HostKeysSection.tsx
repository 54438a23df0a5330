// The SSH host keys of an inventory's hosts or of a project's git server: the policy, the stored keys (recorded by
// a run, or pinned by a user) and, for those who manage the owner, forgetting a host's keys, pinning a host's keys
// (ssh-keyscan output welcome) and replacing or forgetting them all. The API stays the judge of every change.
import type { KnownHost, KnownHostList } from '@baton/contracts';
import { type ReactNode, useEffect, useId, useState } from 'react';
import { Link } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { SubjectName } from '../../ui/AccessPanel';
import { ConfirmButton } from '../../ui/Confirm';
import { asApiError, Field, FormError, LoadError, SubmitRow } from '../../ui/forms';
import { EmptyState, Loading } from '../../ui/layout';
import { Time } from '../../ui/Time';
import { HOST_KEY_CHECKING } from './host-key-checking';
import './known-hosts.css';

export type HostKeyScope = 'inventories' | 'projects';

/** The id the section has on the page: links such as /inventories/{id}#host-keys lead to it. */
export const HOST_KEYS_ANCHOR = 'host-keys';

interface HostKeysSectionProps {
  scope: HostKeyScope;
  ownerId: string;
  ownerName: string;
  /** the caller may change the keys (manage on the owner); viewers and use-only callers see the table only */
  canManage: boolean;
  /** the pin form's host to start with (the host a failed run could not trust, or the project's git server) */
  suggestHost?: string | undefined;
  /** ssh host → the inventory's host names that connect to it, shown beside the address */
  aliases?: Map<string, string[]> | undefined;
  /** a word on when the keys apply (a project whose URL is not SSH) */
  note?: ReactNode;
  /** false when no SSH is involved (a project over https): with nothing stored, only the policy and the note show */
  relevant?: boolean;
}

const WHAT: Record<HostKeyScope, { of: string; reached: string }> = {
  inventories: { of: 'its hosts', reached: 'run' },
  projects: { of: 'its git server (git over SSH)', reached: 'sync' },
};

export function HostKeysSection({
  scope,
  ownerId,
  ownerName,
  canManage,
  suggestHost,
  aliases,
  note,
  relevant = true,
}: HostKeysSectionProps) {
  const path = `/v1/${scope}/${ownerId}/known-hosts`;
  const q = useApi<KnownHostList>(path);
  const [notice, setNotice] = useState<string | null>(null);
  const forget = useApiMutation<string | undefined, void>(
    'DELETE',
    (host) => (host === undefined ? path : `${path}/${encodeURIComponent(host)}`),
    {
      invalidate: [path],
      onSuccess: (_, host) => setNotice(host === undefined ? 'Every host key was forgotten.' : `Forgot ${host}.`),
    },
  );
  useScrollToAnchor(q.data !== undefined || q.error !== null);

  const policy = q.data?.host_key_checking;
  const groups = groupByHost(q.data?.items ?? []);
  const quiet = !relevant && groups.length === 0;
  return (
    <section id={HOST_KEYS_ANCHOR} aria-labelledby="host-keys-heading" className="host-keys" tabIndex={-1}>
      <h2 id="host-keys-heading">Host keys</h2>
      <p className="muted">
        The SSH host keys of {WHAT[scope].of} that Baton trusts. A changed key is refused (the host is unreachable)
        until its new key is pinned here.
      </p>
      {policy ? (
        <p data-testid="host-key-policy" data-policy={policy}>
          Host key checking: <strong>{HOST_KEY_CHECKING[policy].label}</strong>. {HOST_KEY_CHECKING[policy].explain}
        </p>
      ) : null}
      {note ? <p className="hint">{note}</p> : null}
      {q.error ? <LoadError error={q.error} /> : null}
      {notice ? (
        <div className="banner banner-info" role="status" data-testid="host-keys-notice">
          {notice}
        </div>
      ) : null}
      <FormError error={forget.error} />
      {q.isLoading ? (
        <Loading what="Loading host keys" />
      ) : !q.data || quiet ? null : groups.length === 0 ? (
        <EmptyState title="No host keys stored">{emptyText(scope, q.data.host_key_checking)}</EmptyState>
      ) : (
        <div className="table-wrap">
          <table data-testid="host-keys">
            <caption className="visually-hidden">Stored host keys</caption>
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Key type</th>
                <th scope="col">Fingerprint</th>
                <th scope="col">Source</th>
                <th scope="col">Added</th>
                {canManage ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {groups.map(([host, keys]) =>
                keys.map((k, i) => (
                  <tr key={`${host} ${k.key_type} ${k.key}`} data-host={host} data-source={k.source}>
                    {i === 0 ? (
                      <th scope="row" rowSpan={keys.length} className="mono host-cell">
                        {host}
                        {aliases?.get(host)?.length ? (
                          <div className="muted host-aliases">{aliases.get(host)!.join(', ')}</div>
                        ) : null}
                      </th>
                    ) : null}
                    <td className="mono nowrap">{k.key_type}</td>
                    <td>
                      <code className="fingerprint" data-testid="fingerprint">
                        {k.fingerprint}
                      </code>
                    </td>
                    <td>
                      <Source k={k} scope={scope} />
                    </td>
                    <td>
                      <Time at={k.created_at} />
                    </td>
                    {canManage && i === 0 ? (
                      <td rowSpan={keys.length}>
                        <ConfirmButton
                          label={`Forget ${host}`}
                          question={`Forget the host key${keys.length === 1 ? '' : 's'} of ${host}?`}
                          detail={forgetDetail(scope, q.data.host_key_checking)}
                          onConfirm={() => {
                            setNotice(null);
                            forget.mutate(host);
                          }}
                          disabled={forget.isPending}
                        >
                          Forget
                        </ConfirmButton>
                      </td>
                    ) : null}
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      )}
      {canManage && q.data && !quiet ? (
        <>
          <PinForm
            key={suggestHost ?? ''}
            scope={scope}
            path={path}
            suggestHost={suggestHost}
            choices={aliases ? [...aliases.keys()].sort() : []}
            onPinned={(m) => {
              forget.reset();
              setNotice(m);
            }}
          />
          <ReplaceAll
            path={path}
            ownerName={ownerName}
            stored={q.data.items.length}
            onReplaced={(m) => {
              forget.reset();
              setNotice(m);
            }}
            forgetAll={
              q.data.items.length > 0 ? (
                <ConfirmButton
                  question={`Forget every host key of ${ownerName}?`}
                  detail={forgetDetail(scope, q.data.host_key_checking)}
                  onConfirm={() => {
                    setNotice(null);
                    forget.mutate(undefined);
                  }}
                  disabled={forget.isPending}
                >
                  Forget all
                </ConfirmButton>
              ) : null
            }
          />
        </>
      ) : null}
    </section>
  );
}

function Source({ k, scope }: { k: KnownHost; scope: HostKeyScope }) {
  if (k.source === 'pinned')
    return (
      <span data-testid="key-source">
        Pinned by {k.created_by ? <SubjectName id={k.created_by} showKind={false} /> : 'a user'}
      </span>
    );
  return (
    <span data-testid="key-source">
      {k.run_id ? (
        <>
          Recorded by run <Link href={`/runs/${k.run_id}`}>{k.run_id}</Link>
        </>
      ) : scope === 'projects' ? (
        'Recorded when the repository was first reached'
      ) : (
        'Recorded on first contact'
      )}
    </span>
  );
}

/** Host → its keys, in the API's host order. */
function groupByHost(items: KnownHost[]): Array<[string, KnownHost[]]> {
  const out = new Map<string, KnownHost[]>();
  for (const k of items) out.set(k.host, [...(out.get(k.host) ?? []), k]);
  return [...out];
}

function emptyText(scope: HostKeyScope, policy: KnownHostList['host_key_checking']): string {
  const first = scope === 'inventories' ? 'the first run that reaches a host' : 'the first sync over SSH';
  if (policy === 'accept_new')
    return `With “Accept new keys”, ${first} records its key here; after that a changed key is refused.`;
  if (policy === 'strict')
    return `With “Strict”, ${scope === 'inventories' ? 'runs reach only hosts' : 'git reaches the server only'} whose keys are pinned here: pin them below (ssh-keyscan output works).`;
  return 'Host key checking is off: nothing is recorded and every key is accepted. Keys pinned here are kept for when it is turned on.';
}

function forgetDetail(scope: HostKeyScope, policy: KnownHostList['host_key_checking']): string {
  const next = scope === 'inventories' ? 'The next run that reaches it' : 'The next sync';
  if (policy === 'accept_new') return `${next} records whatever key the host presents then, without asking.`;
  if (policy === 'strict') return 'With strict checking, it is refused until its key is pinned again.';
  return 'Host key checking is off, so nothing changes until it is turned on.';
}

/**
 * Brings the section into view when the address names it (a run's "host keys" link). The tables above it may still
 * be loading and push it down: it is kept in view as they grow, until the reader scrolls or types, or 3 s pass.
 */
function useScrollToAnchor(ready: boolean) {
  useEffect(() => {
    if (!ready || window.location.hash !== `#${HOST_KEYS_ANCHOR}`) return;
    const el = document.getElementById(HOST_KEYS_ANCHOR);
    if (!el) return;
    const scroll = () => el.scrollIntoView({ block: 'start' });
    scroll();
    el.focus({ preventScroll: true });
    const grows = new ResizeObserver(scroll);
    grows.observe(el.parentElement ?? document.body);
    const userEvents = ['wheel', 'touchstart', 'keydown', 'pointerdown'] as const;
    const stop = () => {
      grows.disconnect();
      clearTimeout(timer);
      for (const e of userEvents) window.removeEventListener(e, stop);
    };
    const timer = setTimeout(stop, 3000);
    for (const e of userEvents) window.addEventListener(e, stop, { passive: true });
    return stop;
  }, [ready]);
}

function PinForm({
  scope,
  path,
  suggestHost,
  choices,
  onPinned,
}: {
  scope: HostKeyScope;
  path: string;
  suggestHost: string | undefined;
  /** hosts to offer in the host field (the inventory's, as ssh names them) */
  choices: string[];
  onPinned(message: string): void;
}) {
  const headingId = useId();
  const listId = useId();
  const [host, setHost] = useState(suggestHost ?? '');
  const [keys, setKeys] = useState('');
  const [local, setLocal] = useState<{ host?: string; keys?: string }>({});
  const target = host.trim();
  const pin = useApiMutation<{ keys: string }, KnownHost[]>('PUT', () => `${path}/${encodeURIComponent(target)}`, {
    invalidate: [path],
    onSuccess: (stored) => {
      setKeys('');
      onPinned(
        `Pinned ${stored.length} key${stored.length === 1 ? '' : 's'} of ${target}: ${stored.map((k) => k.fingerprint).join(', ')}.`,
      );
    },
  });

  // The host travels in the path: the API names its problems `path.host`.
  const hostErrors = (asApiError(pin.error)?.problem.errors ?? [])
    .filter((x) => x.path === 'path.host')
    .map((x) => x.message);

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const problems = {
      host: target ? (/\s/.test(target) ? 'one host, without spaces' : undefined) : 'give the host as ssh reaches it',
      keys: keys.trim() ? undefined : 'paste at least one key',
    };
    setLocal(problems);
    if (problems.host || problems.keys) {
      pin.reset();
      return;
    }
    pin.mutate({ keys });
  }

  return (
    <form className="card pin-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h3 id={headingId}>Pin a host’s keys</h3>
      <FormError error={pin.error} fields={['keys', 'path.host']} />
      <Field
        label="Host"
        name="host"
        localErrors={[...(local.host ? [local.host] : []), ...hostErrors]}
        hint={
          scope === 'inventories'
            ? 'As ssh reaches it: the ansible_host address (or name), written [address]:port when the port is not 22.'
            : 'The git server as ssh reaches it: the host of the Git URL, written [host]:port when the port is not 22.'
        }
      >
        {(p) => (
          <input
            {...p}
            className="mono"
            value={host}
            list={choices.length ? listId : undefined}
            onChange={(e) => {
              setHost(e.target.value);
              setLocal((l) => ({ ...l, host: undefined }));
            }}
            autoComplete="off"
            spellCheck={false}
          />
        )}
      </Field>
      {choices.length ? (
        <datalist id={listId}>
          {choices.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      ) : null}
      <Field
        label="Keys"
        name="keys"
        error={pin.error}
        localErrors={local.keys ? [local.keys] : []}
        hint={
          <>
            The output of <code>ssh-keyscan {target || 'host'}</code>, known_hosts lines naming this host, or public
            keys as <code>ssh-ed25519 AAAA…</code> (a .pub file). They replace the host’s stored keys. Check the
            fingerprint against the host’s own (<code>ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub</code>) before
            you trust it.
          </>
        }
      >
        {(p) => (
          <textarea
            {...p}
            className="keys-editor"
            value={keys}
            rows={5}
            spellCheck={false}
            onChange={(e) => {
              setKeys(e.target.value);
              setLocal((l) => ({ ...l, keys: undefined }));
            }}
          />
        )}
      </Field>
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={pin.isPending}>
          {pin.isPending ? 'Pinning…' : 'Pin keys'}
        </button>
      </SubmitRow>
    </form>
  );
}

function ReplaceAll({
  path,
  ownerName,
  stored,
  onReplaced,
  forgetAll,
}: {
  path: string;
  ownerName: string;
  stored: number;
  onReplaced(message: string): void;
  forgetAll: ReactNode;
}) {
  const headingId = useId();
  const [text, setText] = useState('');
  const replace = useApiMutation<{ known_hosts: string }, KnownHostList>('PUT', path, {
    invalidate: [path],
    onSuccess: (list) => {
      setText('');
      const hosts = new Set(list.items.map((k) => k.host)).size;
      onReplaced(
        `Replaced every host key: ${list.items.length} key${list.items.length === 1 ? '' : 's'} of ${hosts} host${hosts === 1 ? '' : 's'} pinned.`,
      );
    },
  });
  // Not a <form>: the confirmation dialog holds a form of its own, and forms do not nest.
  return (
    <div className="card replace-all" role="group" aria-labelledby={headingId}>
      <h3 id={headingId}>Replace or forget all keys</h3>
      <FormError error={replace.error} fields={['known_hosts']} />
      <Field
        label="known_hosts lines"
        name="known_hosts"
        error={replace.error}
        hint={
          <>
            One <code>host key-type key</code> line per key, as <code>ssh-keyscan</code> prints them (comments and blank
            lines are skipped). Every key becomes pinned
            {stored > 0
              ? `, and the ${stored} key${stored === 1 ? '' : 's'} stored now ${stored === 1 ? 'is' : 'are'} dropped`
              : ''}
            .
          </>
        }
      >
        {(p) => (
          <textarea
            {...p}
            className="keys-editor"
            value={text}
            rows={6}
            spellCheck={false}
            onChange={(e) => setText(e.target.value)}
          />
        )}
      </Field>
      <SubmitRow>
        <ConfirmButton
          question={`Replace every host key of ${ownerName}?`}
          detail="The lines above become the only trusted keys, all pinned; keys recorded by runs are dropped."
          confirmLabel="Replace all"
          onConfirm={() => replace.mutate({ known_hosts: text })}
          disabled={replace.isPending || text.trim() === ''}
        >
          Replace all
        </ConfirmButton>
        {forgetAll}
      </SubmitRow>
    </div>
  );
}

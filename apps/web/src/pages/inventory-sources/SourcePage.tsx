// One inventory source: its definition, its last refresh (time, host count, error), refresh now.
import { Link, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { ErrorBanner } from '../../ui/forms';
import { Details, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { DeleteError, ObjectLink } from '../projects/objects';
import type { InventorySource } from '../projects/types';
import { KIND_LABEL } from './kinds';
import { RefreshBadge } from './RefreshBadge';
import '../projects/inputs.css';

export default function SourcePage() {
  const { id } = useParams<{ id: string }>();
  const canRefresh = useHasRole('operator');
  const canManage = useCanManage(id);
  const path = `/v1/inventory-sources/${id}`;
  const q = useApi<InventorySource>(path);
  // A failed refresh is recorded as last_error too, so the source is fetched again either way.
  const refresh = useApiMutation<void, InventorySource>('POST', `${path}/refresh`, {
    invalidate: ['/v1/inventory-sources', '/v1/inventories'],
  });
  const remove = useDeleteObject('inventory-sources', id);
  const src = q.data;
  if (q.error || !src) return <NotLoaded error={q.error} what="Loading the inventory source" />;
  return (
    <>
      <PageHeader
        title={src.name}
        subtitle={KIND_LABEL[src.kind]}
        actions={
          <>
            {canRefresh ? (
              <button
                type="button"
                className="btn btn-primary"
                disabled={refresh.isPending}
                onClick={() => refresh.mutate(undefined, { onSettled: () => void q.refetch() })}
              >
                {refresh.isPending ? 'Refreshing…' : 'Refresh'}
              </button>
            ) : null}
            {canManage ? (
              <>
                <Link href={`/inventory-sources/${id}/edit`} className="btn">
                  Edit
                </Link>
                <DeleteButton
                  remove={remove}
                  question={`Delete the inventory source ${src.name}?`}
                  detail="Its target inventory stays as it is."
                />
              </>
            ) : null}
          </>
        }
      />
      {refresh.isSuccess ? (
        <div className="banner banner-info" role="status" data-testid="refresh-result">
          Refreshed: {refresh.data.host_count ?? 0} host{refresh.data.host_count === 1 ? '' : 's'} written into the
          target inventory.
        </div>
      ) : null}
      {refresh.error ? (
        <ErrorBanner title="Refresh failed: the inventory keeps its last good content">
          <p data-testid="refresh-error">{refresh.error.problem.detail ?? refresh.error.message}</p>
        </ErrorBanner>
      ) : null}
      <DeleteError error={remove.error} />
      <Details
        items={[
          ['Result', <RefreshBadge source={src} />],
          ['Last refreshed', <Time at={src.refreshed_at} empty="never" />],
          ['Hosts', src.host_count === null ? null : String(src.host_count)],
          ['Target inventory', <ObjectLink kind="inventories" id={src.inventory_id} />],
          ...(src.kind === 'url'
            ? ([
                ['URL', <span className="mono wrap-anywhere">{src.url}</span>],
                ['Token credential', <ObjectLink kind="credentials" id={src.credential_id} />],
              ] as Array<[string, React.ReactNode]>)
            : ([
                ['Project', <ObjectLink kind="projects" id={src.project_id} />],
                ['Path', <span className="mono">{src.path}</span>],
              ] as Array<[string, React.ReactNode]>)),
          ['Refresh interval', src.refresh_interval_s === null ? null : `${src.refresh_interval_s} s`],
          ['Created', <Time at={src.created_at} />],
          ['Updated', <Time at={src.updated_at} />],
        ]}
      />
      {src.last_error ? (
        <section aria-labelledby="last-error">
          <h2 id="last-error">Last error</h2>
          <pre className="content-view" data-testid="last-error">
            {src.last_error}
          </pre>
        </section>
      ) : null}
      <AccessPanel objectId={src.id} />
    </>
  );
}

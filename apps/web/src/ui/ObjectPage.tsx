// What the pages of one object (a project, template, team…) share: waiting for the object, deleting it from the
// header, and its edit page.
import { Fragment, type ReactNode } from 'react';
import { useLocation, useParams } from 'wouter';
import { useApi, useApiMutation } from '../api/hooks';
import { ConfirmButton } from './Confirm';
import { LoadError } from './forms';
import { Loading, PageHeader } from './layout';

/** Why the object is not shown: its load error (a 404 says it is gone or not visible), or that it is loading. */
export function NotLoaded({ error, what }: { error: unknown; what: string }) {
  return error ? <LoadError error={error} /> : <Loading what={what} />;
}

/**
 * DELETE /v1/<collection>/<id>; afterwards the cached lists of the collection (and `alsoInvalidate`, for what the
 * object took with it) are refreshed and the browser goes to the collection's list page.
 */
export function useDeleteObject(collection: string, id: string, alsoInvalidate: string[] = []) {
  const [, navigate] = useLocation();
  return useApiMutation<void, void>('DELETE', `/v1/${collection}/${id}`, {
    invalidate: [`/v1/${collection}`, ...alsoInvalidate],
    onSuccess: () => navigate(`/${collection}`),
  });
}

/** The header's Delete button: asks first, then runs the delete; disabled while it is under way. */
export function DeleteButton({
  remove,
  question,
  detail,
  children = 'Delete',
}: {
  remove: ReturnType<typeof useDeleteObject>;
  question: string;
  detail: ReactNode;
  children?: ReactNode;
}) {
  return (
    <ConfirmButton question={question} detail={detail} onConfirm={() => remove.mutate()} disabled={remove.isPending}>
      {children}
    </ConfirmButton>
  );
}

/**
 * The edit page of the object at /v1/<collection>/<id> (the route's `id`): its form once the object is loaded, made
 * afresh when a newer version arrives.
 */
export function EditObjectPage<T extends { name: string; updated_at: string }>({
  collection,
  what,
  form,
}: {
  collection: string;
  /** the kind of object, for the title while it loads ("credential") */
  what: string;
  form(object: T): ReactNode;
}) {
  const { id } = useParams<{ id: string }>();
  const q = useApi<T>(`/v1/${collection}/${id}`);
  return (
    <>
      <PageHeader title={q.data ? `Edit ${q.data.name}` : `Edit ${what}`} />
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data ? <Fragment key={q.data.updated_at}>{form(q.data)}</Fragment> : q.isLoading ? <Loading /> : null}
    </>
  );
}

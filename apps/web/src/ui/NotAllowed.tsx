// A page the caller's role does not allow: its title, why, and (in `children`) where to go instead. The API would
// refuse anyway; this says so before anything is filled in.
import type { ReactNode } from 'react';
import { ErrorBanner } from './forms';
import { PageHeader } from './layout';

export function NotAllowed({ title, children }: { title: string; children: ReactNode }) {
  return (
    <>
      <PageHeader title={title} />
      <ErrorBanner title="Not allowed">{children}</ErrorBanner>
    </>
  );
}

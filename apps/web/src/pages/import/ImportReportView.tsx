// What an import did (or, in a dry run, would do): counts by kind, what was skipped and why, the warnings, and the
// follow-ups it leaves: credentials whose secrets the export did not carry, users who need a password. A dry run's
// ids are the ones the import would use, so they are not links (nothing exists there yet).
import type { ImportedKind, ImportReport } from '@baton/contracts';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { Details } from '../../ui/layout';

/** In the order the import creates them (IMPORTED_KINDS); the Record type keeps this list complete. */
const KIND_LABELS: Record<ImportedKind, string> = {
  user: 'Users',
  team: 'Teams',
  membership: 'Team memberships',
  grant: 'Grants',
  credential: 'Credentials',
  project: 'Projects',
  inventory: 'Inventories',
  inventory_source: 'Inventory sources',
  template: 'Templates',
  schedule: 'Schedules',
  trigger: 'Triggers',
  policy: 'Approval policies',
};

const FORMAT_LABELS: Record<ImportReport['format'], string> = {
  awx: 'AWX export',
  semaphore: 'Semaphore project backup',
};

export function totals(report: ImportReport): { created: number; updated: number } {
  const sum = (counts: Partial<Record<ImportedKind, number>>) =>
    Object.values(counts).reduce((a, n) => a + (n ?? 0), 0);
  return { created: sum(report.created), updated: sum(report.updated) };
}

/** One line for the live region: what happened, in numbers. */
export function summaryLine(report: ImportReport): string {
  const t = totals(report);
  const counts = `${t.created} to create, ${t.updated} to update, ${report.skipped.length} skipped, ${report.warnings.length} warnings`;
  return report.dry_run
    ? `Preview ready (nothing written): ${counts}.`
    : `Imported: ${counts.replace('to create', 'created').replace('to update', 'updated')}.`;
}

export function ImportReportView({ report }: { report: ImportReport }) {
  const dry = report.dry_run;
  // Source references by the id they map to, to name the ids of the follow-up lists.
  const refOf = new Map(Object.entries(report.id_map).map(([ref, id]) => [id, ref]));
  const kinds = (Object.keys(KIND_LABELS) as ImportedKind[]).filter(
    (k) => report.created[k] !== undefined || report.updated[k] !== undefined,
  );
  const unknownKinds = [...Object.keys(report.created), ...Object.keys(report.updated)].filter(
    (k, i, all) => !(k in KIND_LABELS) && all.indexOf(k) === i,
  ) as ImportedKind[];
  const t = totals(report);
  const mapEntries = Object.entries(report.id_map);
  return (
    <section className="card import-report" aria-labelledby="import-report-heading" data-dry-run={dry}>
      <h2 id="import-report-heading">{dry ? 'Preview (dry run): nothing was written' : 'Import report'}</h2>
      <Details
        items={[
          ['Format', FORMAT_LABELS[report.format] ?? report.format],
          ['Looks like', report.source_version ?? null],
          ['On conflict', report.on_conflict],
        ]}
      />

      <h3>{dry ? 'Would be created or updated' : 'Created and updated'}</h3>
      {kinds.length + unknownKinds.length === 0 ? (
        <p>Nothing {dry ? 'would be' : 'was'} created or updated.</p>
      ) : (
        <div className="table-wrap">
          <table className="import-counts" data-testid="import-counts">
            <caption className="visually-hidden">Objects by kind</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col" className="num">
                  {dry ? 'To create' : 'Created'}
                </th>
                <th scope="col" className="num">
                  {dry ? 'To update' : 'Updated'}
                </th>
              </tr>
            </thead>
            <tbody>
              {[...kinds, ...unknownKinds].map((k) => (
                <tr key={k} data-kind={k}>
                  <th scope="row">{KIND_LABELS[k] ?? k}</th>
                  <td className="num" data-testid={`created-${k}`}>
                    {report.created[k] ?? 0}
                  </td>
                  <td className="num" data-testid={`updated-${k}`}>
                    {report.updated[k] ?? 0}
                  </td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                <td className="num">{t.created}</td>
                <td className="num">{t.updated}</td>
              </tr>
            </tfoot>
          </table>
        </div>
      )}

      <h3>Skipped</h3>
      {report.skipped.length === 0 ? (
        <p>Nothing skipped.</p>
      ) : (
        <div className="table-wrap">
          <table data-testid="import-skipped">
            <caption className="visually-hidden">Skipped objects</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Name</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {report.skipped.map((s, i) => (
                <tr key={i}>
                  <td>{s.kind}</td>
                  <td className="wrap-anywhere">{s.name}</td>
                  <td>{s.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h3>Warnings</h3>
      {report.warnings.length === 0 ? (
        <p>No warnings.</p>
      ) : (
        <ul className="import-warnings" data-testid="import-warnings">
          {report.warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}

      <FollowUps
        title="Credentials needing secrets"
        testId="import-needs-secret"
        intro={
          dry
            ? 'The export does not carry secrets: after the import, set them on these credentials.'
            : 'The export did not carry their secrets: open each one and edit it to set them. Runs using them fail until then.'
        }
        items={report.needs_secret.map((id) => ({
          key: id,
          label: sourceName(refOf.get(id)) ?? id,
          href: dry ? null : `/credentials/${id}`,
          note: refOf.get(id),
        }))}
      />
      <FollowUps
        title="Users needing a password"
        testId="import-users-needing-password"
        intro={
          dry
            ? 'The export carries no usable passwords: after the import, set one for each of these users.'
            : 'They cannot sign in until a password is set on their user page.'
        }
        items={report.users_needing_password.map((u) => ({
          key: u.id,
          label: u.username,
          href: dry ? null : `/users/${u.id}`,
        }))}
      />

      <details className="import-id-map">
        <summary>
          {dry ? 'Ids the import would use' : 'Ids of the imported objects'} ({mapEntries.length})
        </summary>
        {mapEntries.length === 0 ? (
          <p>None.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="import-id-map">
              <caption className="visually-hidden">Source reference to Baton id</caption>
              <thead>
                <tr>
                  <th scope="col">In the export</th>
                  <th scope="col">Baton id</th>
                </tr>
              </thead>
              <tbody>
                {mapEntries.map(([ref, id]) => (
                  <tr key={ref}>
                    <td className="wrap-anywhere">{ref}</td>
                    <td className="mono">{id}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </section>
  );
}

/** `key:deploy-ssh` → `deploy-ssh` (references are `<source kind>:<source name>`). */
function sourceName(ref: string | undefined): string | undefined {
  if (!ref) return undefined;
  const colon = ref.indexOf(':');
  return colon < 0 ? ref : ref.slice(colon + 1);
}

function FollowUps({
  title,
  testId,
  intro,
  items,
}: {
  title: string;
  testId: string;
  intro: ReactNode;
  items: Array<{ key: string; label: string; href: string | null; note?: string }>;
}) {
  if (items.length === 0) return null;
  const headingId = `${testId}-heading`;
  return (
    <section aria-labelledby={headingId} data-testid={testId}>
      <h3 id={headingId}>{title}</h3>
      <p className="muted">{intro}</p>
      <ul>
        {items.map((it) => (
          <li key={it.key}>
            {it.href ? <Link href={it.href}>{it.label}</Link> : <span>{it.label}</span>}
            {it.note && it.note !== it.label ? <span className="muted"> ({it.note})</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

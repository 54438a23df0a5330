// The Galaxy requirements a sync found at the synced commit: each requirements file with the roles and collections
// it names (what runs will install before the playbook), or the problem that will make runs fail on it.
import { EmptyState } from '../../ui/layout';
import { ShortCommit } from './sync';
import type { ProjectRequirements } from './types';
import './inputs.css';

export function Requirements({ requirements, commit }: { requirements: ProjectRequirements[]; commit: string | null }) {
  const problems = requirements.filter((r) => r.problem);
  return (
    <section aria-labelledby="requirements-heading" data-testid="requirements">
      <h2 id="requirements-heading">Galaxy requirements</h2>
      <p className="muted">
        Found at commit <ShortCommit commit={commit} />: runs install them with ansible-galaxy before the playbook
        starts (cached while the files stay the same).
      </p>
      {problems.length ? (
        <div className="banner banner-error" role="alert" data-testid="requirements-problem">
          <strong>
            {problems.length === 1 ? 'A requirements file' : `${problems.length} requirements files`} cannot be read:
            runs of this commit will fail.
          </strong>
        </div>
      ) : null}
      {requirements.length === 0 ? (
        <EmptyState title="No requirements files">
          Nothing to install: the commit has no collections/requirements.yml, roles/requirements.yml or
          requirements.yml.
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Requirements files at the synced commit</caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Collections</th>
                <th scope="col">Roles</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {requirements.map((r) => (
                <tr key={r.path} data-requirements={r.path}>
                  <th scope="row" className="mono">
                    {r.path}
                  </th>
                  <td>
                    <Names names={r.collections} />
                  </td>
                  <td>
                    <Names names={r.roles} />
                  </td>
                  <td>
                    {r.problem ? <span className="problem-text">{r.problem}</span> : <span className="muted">—</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Names({ names }: { names: string[] }) {
  if (names.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="requirements-list">
      {names.map((n, i) => (
        <li key={`${i} ${n}`}>{n}</li>
      ))}
    </ul>
  );
}

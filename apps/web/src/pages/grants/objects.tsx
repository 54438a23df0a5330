// Links to the objects grants and audit entries name, by id prefix (the pages each area serves).
import { Link } from 'wouter';

const PAGE_OF_PREFIX: Record<string, { path: string; word: string }> = {
  inv: { path: '/inventories', word: 'Inventory' },
  prj: { path: '/projects', word: 'Project' },
  tpl: { path: '/templates', word: 'Template' },
  cred: { path: '/credentials', word: 'Credential' },
  src: { path: '/inventory-sources', word: 'Inventory source' },
  sch: { path: '/schedules', word: 'Schedule' },
  trg: { path: '/triggers', word: 'Trigger' },
  team: { path: '/teams', word: 'Team' },
  usr: { path: '/users', word: 'User' },
  pol: { path: '/policies', word: 'Policy' },
  run: { path: '/runs', word: 'Run' },
};

/** What kind of object an id names, in words ("Inventory"), from its prefix. */
export function objectKind(id: string): string {
  return PAGE_OF_PREFIX[id.slice(0, id.indexOf('_'))]?.word ?? 'Object';
}

export function ObjectLink({ id }: { id: string }) {
  const page = PAGE_OF_PREFIX[id.slice(0, id.indexOf('_'))];
  return (
    <span className="subject">
      <span className="subject-kind">{page?.word ?? 'Object'}</span>{' '}
      {page ? (
        <Link href={`${page.path}/${id}`}>
          <code>{id}</code>
        </Link>
      ) : (
        <code>{id}</code>
      )}
    </span>
  );
}

// The frame around every signed-in page: a skip link, the left navigation, the user's menu.
import type { ReactNode } from 'react';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useAuth, useMe } from '../auth/auth';
import { NAV, type NavItem, useNavShown } from './nav';

function NavEntry({ item, onPick }: { item: NavItem; onPick(): void }) {
  const [location] = useLocation();
  const active = location === item.path || location.startsWith(`${item.path}/`);
  return (
    <li>
      <Link href={item.path} aria-current={active ? 'page' : undefined} onClick={onPick}>
        {item.label}
      </Link>
    </li>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const me = useMe();
  const { signOut } = useAuth();
  const [menuOpen, setMenuOpen] = useState(false);
  const shown = useNavShown();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="btn nav-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          Menu
        </button>
        <Link href="/runs" className="brand">
          Baton
        </Link>
        <div className="topbar-user">
          <span data-testid="whoami">
            {me.user.username} <span className="muted">({me.role})</span>
          </span>
          <button type="button" className="btn btn-small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="nav" className={`sidenav${menuOpen ? ' open' : ''}`} aria-label="Main">
        {NAV.map((group) => {
          // A section none of whose entries shows (the AI one before a provider is configured) is left out whole.
          const items = group.items.filter(shown);
          if (!items.length) return null;
          return (
            <div key={group.section} className="nav-group">
              <h2 className="nav-heading">{group.section}</h2>
              <ul>
                {items.map((item) => (
                  <NavEntry key={item.path} item={item} onPick={() => setMenuOpen(false)} />
                ))}
              </ul>
            </div>
          );
        })}
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

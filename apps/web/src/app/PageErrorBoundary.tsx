// A page that fails to load its code (the connection dropped while fetching a chunk) or throws while rendering
// shows what happened and a way on, instead of a blank screen. Keyed by the address: another page starts afresh.
import { Component, type ReactNode } from 'react';

interface State {
  error: Error | null;
}

/** Vite's and the browsers' words for a chunk that could not be fetched. */
const CHUNK_FAILURE =
  /dynamically imported module|Importing a module script failed|error loading dynamically|Failed to fetch/i;

export class PageErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const chunk = CHUNK_FAILURE.test(error.message);
    return (
      <div className="banner banner-error" role="alert">
        <strong>{chunk ? 'This page could not be loaded' : 'Something went wrong on this page'}</strong>
        <p>
          {chunk
            ? 'The connection dropped while the page was loading. Reload to try again.'
            : `${error.message}. Reload the page; if it happens again, report it with what you did.`}
        </p>
        <div className="form-actions">
          <button type="button" className="btn btn-primary" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      </div>
    );
  }
}

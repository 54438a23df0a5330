import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

type Health = 'checking' | 'ok' | 'down';

function App() {
  const [health, setHealth] = useState<Health>('checking');
  useEffect(() => {
    fetch('/healthz')
      .then((r) => setHealth(r.ok ? 'ok' : 'down'))
      .catch(() => setHealth('down'));
  }, []);
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 720, margin: '3rem auto', padding: '0 1rem' }}>
      <h1>Baton</h1>
      <p>Self-hosted server for running Ansible automation.</p>
      <p>
        Server: <strong data-testid="health">{health}</strong>
      </p>
      <p>
        The full web UI is on its way. Meanwhile the API is documented at <a href="/v1/docs">/v1/docs</a>.
      </p>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// The raw log as a file: fetched with the bearer token in a header and saved from a Blob (the token never goes
// into a URL, so no link to /logs?token=…).
import { useState } from 'react';
import { session } from '../../../auth/session';

export function DownloadLogButton({ runId }: { runId: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setBusy(true);
    setError(null);
    try {
      const token = session.token();
      const res = await fetch(`/v1/runs/${runId}/logs`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        cache: 'no-store',
      });
      if (!res.ok) throw new Error(`the server answered ${res.status}`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `${runId}.log`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (err) {
      setError(`Download failed: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="btn btn-small" onClick={() => void download()} disabled={busy}>
        {busy ? 'Downloading…' : 'Download raw log'}
      </button>
      {error ? (
        <span className="field-errors" role="alert">
          {error}
        </span>
      ) : null}
    </>
  );
}

// The next five times of the expression being typed, in the chosen zone, from the server's own arithmetic
// (POST /v1/schedules/preview), asked for a moment after typing stops.
import type { SchedulePreview } from '@baton/contracts';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { type ApiError, request } from '../../api/client';
import { NextTimes } from './cron';

const SETTLE_MS = 300;

function useSettled<T>(value: T): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), SETTLE_MS);
    return () => clearTimeout(t);
  }, [value]);
  return settled;
}

export function NextTimesPreview({ cron, timezone }: { cron: string; timezone: string }) {
  const current = `${cron.trim()}\n${timezone}`;
  const settled = useSettled(current);
  const [expr, zone] = settled.split('\n') as [string, string];
  // Times of an expression no longer in the field are not shown, even for the moment before the next answer.
  const fresh = settled === current;
  const q = useQuery<SchedulePreview, ApiError>({
    queryKey: ['schedule-preview', expr, zone],
    queryFn: ({ signal }) =>
      request<SchedulePreview>('POST', '/v1/schedules/preview', { body: { cron: expr, timezone: zone }, signal }).then(
        (r) => r.body,
      ),
    enabled: expr !== '',
    retry: false,
    staleTime: 30_000,
  });
  return (
    <div className="form-section" aria-live="polite">
      <strong>Next times in {timezone}</strong>
      {expr === '' ? (
        <p className="hint">Type a cron expression to see when it fires.</p>
      ) : !fresh || q.isLoading ? (
        <p className="hint">Working them out…</p>
      ) : q.error ? (
        // The field shows what is wrong with the expression; here only that there are no times.
        <p className="hint">No times: {q.error.problem.errors?.[0]?.message ?? q.error.message}</p>
      ) : q.data ? (
        <NextTimes times={q.data.next_runs} zone={q.data.timezone} />
      ) : null}
    </div>
  );
}

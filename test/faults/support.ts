// What the fault tests share: a recording HTTP client, run and event checks, and a load of readers and submitters.
import { expect } from '@jest/globals';
import type { Run, RunEvent } from '@baton/contracts';
import { call, waitFor } from '../support/baton-process.js';

export const LOCAL_INVENTORY = 'alpha ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

/** One answer the recording client saw. */
export interface Answer {
  method: string;
  url: string;
  status: number;
  contentType: string;
  body: string;
}

/** An HTTP client that keeps every answer (or the transport error) it got, for checks over all of them. */
export function recordingClient(base: string, token: string) {
  const answers: Answer[] = [];
  const transportErrors: string[] = [];
  async function request(method: string, url: string, body?: unknown): Promise<Answer | undefined> {
    try {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = {
        method,
        url,
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: await res.text(),
      };
      answers.push(answer);
      return answer;
    } catch (err) {
      transportErrors.push(`${method} ${url}: ${(err as Error).message}`);
      return undefined;
    }
  }
  return { answers, transportErrors, request };
}

/** Answers that are neither a success nor the 503 problem `type` names (a 500 above all), as readable lines. */
export function unexpectedAnswers(answers: Answer[], slug: string): string[] {
  return answers
    .filter((a) => {
      if (a.status < 300) return false;
      if (a.status !== 503) return true;
      if (!a.contentType.startsWith('application/problem+json')) return true;
      const problem = JSON.parse(a.body) as { type?: string; status?: number };
      return problem.type !== `urn:baton:problem:${slug}` || problem.status !== 503;
    })
    .map((a) => `${a.method} ${a.url} → ${a.status} ${a.body.slice(0, 300)}`);
}

/** Every event of a run in order (paged with after_seq). */
export async function allEvents(s: { base: string }, token: string, runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for (;;) {
    const after = events.length ? events[events.length - 1]!.seq : 0;
    const page = await call<RunEvent[]>(s, token, 'GET', `/v1/runs/${runId}/events?after_seq=${after}&limit=1000`);
    expect(page.status).toBe(200);
    if (page.body.length === 0) return events;
    events.push(...page.body);
  }
}

/** A run's events are numbered 1..N without a gap, and the last one is its final status. */
export function expectGapFreeAndFinal(events: RunEvent[], run: Run): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const last = events[events.length - 1]!;
  expect(last).toMatchObject({ kind: 'status', data: { status: 'finished', conclusion: run.conclusion } });
}

export const finishedRun = (s: { base: string }, token: string, id: string, timeoutMs = 90_000) =>
  waitFor(
    `run ${id} to finish`,
    async () => {
      const r = await call(s, token, 'GET', `/v1/runs/${id}`);
      return r.body?.status === 'finished' ? r.body : undefined;
    },
    timeoutMs,
  );

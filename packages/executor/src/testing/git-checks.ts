// Checks shared by the git tests: the error an operation must fail with, and a temp dir of the test's own that
// every operation must leave empty.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from '@jest/globals';
import { GitError } from '../git/git.js';

/** Asserts the promise rejects with a GitError of this code whose reason matches `reason`. */
export async function expectGitError(promise: Promise<unknown>, code: string, reason?: RegExp): Promise<GitError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GitError);
  const gitErr = err as GitError;
  expect(gitErr.code).toBe(code);
  if (reason) expect(gitErr.reason).toMatch(reason);
  return gitErr;
}

/**
 * Points TMPDIR (so os.tmpdir(), where git operations make their private directories) at a directory of this test
 * file's own for its whole run, and asserts after each test that nothing was left there. `root` is a scratch
 * directory beside it for the test's repositories; both go at the end.
 */
export function ownTmpdirForGitOperations(stem: string): { root: string; opsTmp: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `${stem}-`));
  const opsTmp = path.join(root, 'ops-tmp');
  const savedTmpdir = process.env.TMPDIR;
  beforeAll(() => {
    fs.mkdirSync(opsTmp);
    process.env.TMPDIR = opsTmp;
  });
  afterAll(() => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    fs.rmSync(root, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(fs.readdirSync(opsTmp)).toEqual([]);
  });
  return { root, opsTmp };
}

/**
 * For the enclosing describe: a `git` first on PATH that runs `lines` (shell) and then the real git with the same
 * arguments, so a test can see or bend what each git invocation gets. PATH is restored afterwards.
 */
export function gitFirstOnPath(dir: string, lines: string[]): void {
  const savedPath = process.env.PATH;
  beforeAll(() => {
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'git'), ['#!/bin/sh', ...lines, `exec '${realGit}' "$@"`, ''].join('\n'), {
      mode: 0o755,
    });
    process.env.PATH = `${dir}:${savedPath}`;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
  });
}

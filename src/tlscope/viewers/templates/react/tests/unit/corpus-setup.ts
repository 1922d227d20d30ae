// Vitest global setup: parse a real trace from tlscope's corpus (`tlscope corpus path simple`)
// into a temporary output folder that the unit tests read (inject('traceDir')).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    traceDir: string;
  }
}

const tlscope = (process.env.TLSCOPE_CMD || 'tlscope').split(' ');

export default function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), 'viewer-unit-'));
  const log = execFileSync(tlscope[0], [...tlscope.slice(1), 'corpus', 'path', 'simple'], { encoding: 'utf8' }).trim();
  execFileSync(tlscope[0], [...tlscope.slice(1), log, '-o', join(root, 'simple'), '--no-browser'], { stdio: 'ignore' });
  project.provide('traceDir', join(root, 'simple'));
  return () => rmSync(root, { recursive: true, force: true });
}

// What one row of the event list shows: pure functions, unit-tested (tests/unit/rows.test.ts).
import { compileIdOf, eventLabel, eventSummary, type RawEvent } from './vendor/tlscope/tlscope.js';

export interface RowCells {
  compileId: string;
  label: string;
  summary: string;
  payload: string;
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function rowCells(event: RawEvent): RowCells {
  return {
    compileId: compileIdOf(event),
    label: eventLabel(event),
    summary: eventSummary(event, 160),
    payload: formatBytes(event.payload_size),
  };
}

import { parse } from 'csv-parse/sync';

/** One row of Trac's ticket query CSV export. */
export interface TracTicket {
  id: number;
  summary: string;
  status: string;
  type: string;
  component: string;
  resolution: string;
  /** Creation time, ISO 8601 UTC (seconds), or null when the cell is empty or unreadable. */
  time: string | null;
  /** Last change, ISO 8601 UTC, or null. */
  changetime: string | null;
  reporter: string;
}

/** The columns asked for, in order (Trac puts `id` first whatever the order). */
export const TICKET_COLUMNS = ['id', 'summary', 'status', 'type', 'component', 'resolution', 'time', 'changetime', 'reporter'] as const;

/**
 * Trac 1.4+ heads the CSV with field labels ("Summary", "Created", "Modified"); older releases with
 * field names ("summary", "time", "changetime"). Both map to the field name.
 */
const HEADER: Record<string, string> = {
  id: 'id', ticket: 'id', summary: 'summary', status: 'status', type: 'type', component: 'component',
  resolution: 'resolution', time: 'time', created: 'time', changetime: 'changetime', modified: 'changetime', reporter: 'reporter',
};

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

/** ISO 8601 UTC with second precision: the form every foresight timestamp from a tracker takes. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A Trac time cell as ISO 8601 UTC. The export formats times for the requesting session: ISO 8601 when
 * the site defaults to it ("2019-03-01T10:12:37Z", "+01:00" offsets), Babel's medium English form when
 * the request says Accept-Language: en ("Mar 1, 2019, 10:12:37 AM", also without the comma and with
 * U+202F before AM/PM in recent CLDR), or C strftime "%x %X" ("03/01/19 10:12:37") without Babel.
 * A time without a zone is in the server's zone, which the export does not state: it is read as UTC.
 */
export function parseTracTime(cell: string): string | null {
  const s = cell.replace(/[\u00a0\u202f\u2009]/g, ' ').trim();
  if (!s) return null;
  let m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*(Z|[+-]\d{2}:?\d{2}|[+-]\d{2})?$/i.exec(s);
  if (m) {
    const [, y, mo, d, h, mi, sec = '0', zone] = m;
    let ms = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +sec);
    if (zone && zone.toUpperCase() !== 'Z') {
      const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
      const offset = (Number(z[2]) * 60 + Number(z[3] ?? 0)) * 60_000;
      ms -= z[1] === '+' ? offset : -offset;
    }
    return isoSeconds(ms);
  }
  m = /^([A-Za-z]{3})[a-z]*\.? (\d{1,2}),? (\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))? ?([AaPp][Mm])?$/.exec(s);
  if (m && MONTHS[m[1]!.toLowerCase()] !== undefined) {
    const [, mon, d, y, h, mi, sec = '0', ampm] = m;
    return isoSeconds(Date.UTC(+y!, MONTHS[mon!.toLowerCase()]!, +d!, hour12(+h!, ampm), +mi!, +sec));
  }
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))? ?([AaPp][Mm])?$/.exec(s);
  if (m) {
    const [, mo, d, yy, h, mi, sec = '0', ampm] = m;
    // Python's strptime pivot for %y: 69-99 -> 1900s, 00-68 -> 2000s.
    const y = yy!.length === 4 ? +yy! : +yy! + (+yy! < 69 ? 2000 : 1900);
    return isoSeconds(Date.UTC(y, +mo! - 1, +d!, hour12(+h!, ampm), +mi!, +sec));
  }
  return null;
}

function hour12(h: number, ampm: string | undefined): number {
  if (!ampm) return h;
  const pm = ampm.toLowerCase() === 'pm';
  return (h % 12) + (pm ? 12 : 0);
}

/** Parse a ticket query CSV export (UTF-8 BOM, CRLF, labels or names in the header). Rows without a numeric id are skipped. */
export function parseTicketCsv(text: string): { tickets: TracTicket[]; unreadableTimes: number } {
  const rows = parse(text, { bom: true, columns: false, skip_empty_lines: true, relax_column_count: true, relax_quotes: true }) as string[][];
  const [header, ...body] = rows;
  if (!header) return { tickets: [], unreadableTimes: 0 };
  const names = header.map((h) => HEADER[h.replace(/^\ufeff/, '').trim().toLowerCase()] ?? null);
  if (!names.includes('id')) throw new Error(`not a Trac ticket CSV: no id column in header ${JSON.stringify(header.join(','))}`);
  const tickets: TracTicket[] = [];
  let unreadableTimes = 0;
  for (const row of body) {
    const rec: Record<string, string> = {};
    names.forEach((n, i) => {
      if (n) rec[n] = row[i] ?? '';
    });
    const id = Number(rec.id);
    if (!Number.isInteger(id) || id <= 0) continue;
    const time = parseTracTime(rec.time ?? '');
    const changetime = parseTracTime(rec.changetime ?? '');
    if ((rec.time && !time) || (rec.changetime && !changetime)) unreadableTimes++;
    tickets.push({
      id,
      summary: rec.summary ?? '',
      status: rec.status ?? '',
      type: rec.type ?? '',
      component: rec.component ?? '',
      resolution: rec.resolution ?? '',
      time,
      changetime,
      reporter: rec.reporter ?? '',
    });
  }
  return { tickets, unreadableTimes };
}

/** Whether a ticket type names a defect: Django's "Bug", Trac's default "defect", "bug / defect". */
export function isBugType(type: string): boolean {
  return /\b(bug|defect)\b/i.test(type);
}

/**
 * Calendar periods in a server's time zone (`/settings timezone`, UTC by default): the week
 * (Monday to Monday, as ISO 8601 and Russian calendars count it) and the month, from local
 * midnight to local midnight, whatever their length in hours across a daylight-saving change.
 * Digests are posted at a period's end; period reward roles are given for one period and taken
 * back at its end. date-fns with @date-fns/tz do the calendar arithmetic (TZDate: a Date whose
 * fields are read in a zone), so no offset is computed here.
 */
import { TZDate } from '@date-fns/tz';
// Each function from its own module: the package's index loads every one of its modules, 180 ms
// of the bot's start (and of a restart's gap, issue 26) for five functions.
import { addMonths } from 'date-fns/addMonths';
import { addWeeks } from 'date-fns/addWeeks';
import { startOfMonth } from 'date-fns/startOfMonth';
import { startOfWeek } from 'date-fns/startOfWeek';

export const CALENDAR_PERIODS = ['week', 'month'] as const;
export type CalendarPeriod = (typeof CALENDAR_PERIODS)[number];

export function isCalendarPeriod(value: unknown): value is CalendarPeriod {
  return typeof value === 'string' && (CALENDAR_PERIODS as readonly string[]).includes(value);
}

/** One period of a server's calendar: [start, end), epoch ms, and a key naming it. */
export interface PeriodSpan {
  period: CalendarPeriod;
  start: number;
  end: number;
  /** `month:2026-11`, `week:2026-11-23` (the local date of its Monday): the same in every zone. */
  key: string;
  timeZone: string;
}

/** The period of `timeZone`'s calendar that holds the instant `at`. */
export function periodAt(period: CalendarPeriod, at: number, timeZone: string): PeriodSpan {
  const local = new TZDate(at, timeZone);
  const start = period === 'month' ? startOfMonth(local) : startOfWeek(local, { weekStartsOn: 1 });
  const end = period === 'month' ? addMonths(start, 1) : addWeeks(start, 1);
  // The start's date as the zone reads it (TZDate's fields are the zone's).
  const two = (n: number) => String(n).padStart(2, '0');
  const month = `${start.getFullYear()}-${two(start.getMonth() + 1)}`;
  const key = `${period}:${period === 'month' ? month : `${month}-${two(start.getDate())}`}`;
  return { period, start: start.getTime(), end: end.getTime(), key, timeZone };
}

/** The period before `span` (what ended at its start). */
export function previousPeriod(span: PeriodSpan): PeriodSpan {
  return periodAt(span.period, span.start - 1, span.timeZone);
}

/** The period after `span` (what begins at its end). */
export function nextPeriod(span: PeriodSpan): PeriodSpan {
  return periodAt(span.period, span.end, span.timeZone);
}

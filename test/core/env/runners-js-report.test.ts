/**
 * What the JavaScript runners read from their reports, without running them: which requested file a reported
 * path is, ids of repeated titles, unreadable reports, the class a failure names (js-report.ts), and the
 * registry's view of the three runners.
 */
import { describe, expect, it } from 'vitest';
import { errorKind, parseJestReport, parseMochaReport, requestedFile } from '../../../core/env/runners/js-report.ts';
import { getRunner } from '../../../core/env/runners/registry.ts';

describe('report parsing', () => {
  it('requestedFile takes the longest requested path the reported one ends with; others are dropped', () => {
    expect(requestedFile('/tmp/testbed/src/a.test.js', ['a.test.js', 'src/a.test.js'])).toBe('src/a.test.js');
    expect(requestedFile('/tmp/testbed/a.test.js', ['a.test.js', 'src/a.test.js'])).toBe('a.test.js');
    expect(requestedFile('/tmp/testbed/src/a.test.jsx', ['src/a.test.js'])).toBeNull();
    const report = JSON.stringify({
      testResults: [
        { name: '/w/src/a.test.js', status: 'passed', assertionResults: [{ ancestorTitles: [], title: 't', status: 'passed' }] },
        { name: '/w/src/a.test.jsx', status: 'passed', assertionResults: [{ ancestorTitles: [], title: 't', status: 'passed' }] },
      ],
    });
    expect(parseJestReport('jest', report, ['src/a.test.js']).tests).toEqual({ 'src/a.test.js::t': 'pass' });
  });

  it('a title that already ends in " #2" does not take the id of a duplicate', () => {
    const a = (title: string) => ({ ancestorTitles: ['s'], title, status: 'passed' });
    const report = JSON.stringify({ testResults: [{ name: '/w/x.test.js', status: 'passed', assertionResults: [a('t'), a('t #2'), a('t')] }] });
    expect(Object.keys(parseJestReport('jest', report, ['x.test.js']).tests)).toEqual(['x.test.js::s > t', 'x.test.js::s > t #2', 'x.test.js::s > t #3']);
  });

  it("vitest 1.x's empty file-level suite title is no describe block; an empty describe title elsewhere stays", () => {
    const a = (ancestorTitles: string[], title: string) => ({ ancestorTitles, title, status: 'passed' });
    const report = JSON.stringify({ testResults: [{ name: '/w/src/x.test.ts', status: 'passed', assertionResults: [a(['', 'slugify'], 'joins'), a(['', 'slugify', ''], 'odd'), a([], 'top')] }] });
    expect(Object.keys(parseJestReport('vitest', report, ['src/x.test.ts']).tests)).toEqual(['src/x.test.ts::slugify > joins', 'src/x.test.ts::slugify >  > odd', 'src/x.test.ts::top']);
  });

  it('a report written twice, cut short or of another shape is unreadable (no evidence), never an empty run', () => {
    const one = JSON.stringify({ testResults: [] });
    expect(() => parseJestReport('jest', one + one, [])).toThrow(/jest's JSON report is unreadable/);
    expect(() => parseJestReport('vitest', one.slice(0, 5), [])).toThrow(/unreadable/);
    expect(() => parseJestReport('jest', '{"tests": []}', [])).toThrow(/not a jest-style report/);
    const line = JSON.stringify({ tests: [{ title: 't', titlePath: ['t'], file: '/w/a.test.js', state: 'passed' }], failures: [] });
    expect(parseMochaReport(line, ['a.test.js']).tests).toEqual({ 'a.test.js::t': 'pass' });
    expect(() => parseMochaReport(`${line}\n${line}\n`, ['a.test.js'])).toThrow(/two reports of a.test.js/);
    expect(() => parseMochaReport('{"stats": {}}', ['a.test.js'])).toThrow(/unreadable/);
  });

  it('errorKind reads the class a failure message starts with', () => {
    expect(errorKind('AssertionError [ERR_ASSERTION]: Expected values')).toBe('AssertionError');
    expect(errorKind('\u001b[31mTypeError: x is not a function\n    at y')).toBe('TypeError');
    expect(errorKind('Error: expect(received).toBe(expected)')).toBe('Error');
    expect(errorKind('thrown: "a string"')).toBeNull();
  });

  it('the registry knows the three runners; they run JavaScript and TypeScript files only', () => {
    for (const name of ['jest', 'vitest', 'mocha']) {
      const r = getRunner(name);
      expect(r.runs!('src/a.test.tsx', 'sqlite') && r.runs!('test/b.mjs', 'sqlite')).toBe(true);
      expect(r.runs!('tests/test_a.py', 'sqlite') || r.runs!('a_test.go', 'sqlite')).toBe(false);
    }
  });
});

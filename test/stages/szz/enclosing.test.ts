import { describe, expect, it } from 'vitest';
import { enclosingBlock } from '../../../stages/szz/enclosing.ts';

describe('enclosingBlock', () => {
  const py = [
    'class Store:', //                    1
    '    def get(self, key):', //         2
    '        value = self.data[key]', //  3
    '        return value', //            4
    '', //                                5
    '    def put(self, key, value):', //  6
    '        def check(v):', //           7
    '            return v is not None', // 8
    '', //                                9
    '        self.data[key] = value', //  10
    '', //                                11
    'TOP = 1', //                         12
  ].join('\n');

  it('method_body_line_gets_its_method_not_the_class', () => {
    expect(enclosingBlock(py, 3)).toEqual({ start: 2, end: 4 });
    expect(enclosingBlock(py, 4)).toEqual({ start: 2, end: 4 });
  });

  it('nested_def_line_gets_the_innermost_function', () => {
    expect(enclosingBlock(py, 8)).toEqual({ start: 7, end: 8 });
    // The outer function's own body, below the nested def: the outer function, nested def included.
    expect(enclosingBlock(py, 10)).toEqual({ start: 6, end: 10 });
  });

  it('insertion_between_methods_gets_the_class', () => {
    // The insertion point is judged by the first non-blank line at or below it (line 6, a method header).
    expect(enclosingBlock(py, 5)).toEqual({ start: 1, end: 10 });
  });

  it('top_level_line_has_no_enclosing_block', () => {
    expect(enclosingBlock(py, 12)).toBeNull();
    expect(enclosingBlock(py, 11)).toBeNull(); // blank, judged by TOP = 1 below it
    expect(enclosingBlock(py, 1)).toBeNull();
  });

  const js = [
    'class Cache {', //                     1
    '  get(key) {', //                       2
    '    const v = this.map.get(key);', //   3
    '    return v;', //                      4
    '  }', //                                5
    '', //                                   6
    '  set(key, v) {', //                    7
    '    this.map.set(key, v);', //          8
    '  }', //                                9
    '}', //                                  10
    '', //                                   11
    'function area(w, h) {', //              12
    '  const a = w * h;', //                 13
    '  return a;', //                        14
    '}', //                                  15
    'const handler = (e) => {', //           16
    '  log(e);', //                          17
    '};', //                                 18
    'const X = 1;', //                       19
  ].join('\n');

  it('js_method_block_ends_at_its_own_closing_brace', () => {
    expect(enclosingBlock(js, 3)).toEqual({ start: 2, end: 5 });
    expect(enclosingBlock(js, 8)).toEqual({ start: 7, end: 9 });
  });

  it('js_class_and_functions_include_their_closing_brace', () => {
    expect(enclosingBlock(js, 7)).toEqual({ start: 1, end: 10 });
    expect(enclosingBlock(js, 13)).toEqual({ start: 12, end: 15 });
    expect(enclosingBlock(js, 17)).toEqual({ start: 16, end: 18 });
  });

  it('js_top_level_line_has_no_enclosing_block', () => {
    expect(enclosingBlock(js, 19)).toBeNull();
    expect(enclosingBlock(js, 12)).toBeNull();
  });
});

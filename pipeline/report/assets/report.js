// The report page's script (inlined by pipeline/report/render-page.ts). Every text from the dataset is
// untrusted (PR bodies, diffs, test names): it reaches the DOM only through textContent, attribute values
// and diff2html, which escapes what it renders. Never innerHTML with data, except diff2html's output.
(() => {
  'use strict';

  /** @type {any} */
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const app = document.getElementById('app');
  const rows = data.rows;
  const byId = new Map(rows.map((r) => [r.instance_id, r]));

  const SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'p2p_excluded_gold_fail', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS', 'flaky_tests'];
  const SET_SHORT = { FAIL_TO_PASS: 'F2P', PASS_TO_PASS: 'P2P', p2p_excluded_gold_fail: 'P2P gold-fail', ANTICIPATION_FAIL_TO_PASS: 'A-F2P', PR2_FAIL_TO_PASS: 'PR2 F2P', PR2_PASS_TO_PASS: 'PR2 P2P', flaky_tests: 'flaky' };
  const SET_MEANING = {
    FAIL_TO_PASS: 'pass@S2 and fail@S1: PR1\u2019s own work (X)',
    PASS_TO_PASS: 'pass@S1 and pass@S2: must stay green',
    p2p_excluded_gold_fail: 'pass@S1, not pass@S2: dropped from PASS_TO_PASS because the gold PR1 breaks them',
    ANTICIPATION_FAIL_TO_PASS: 'PR2_FAIL_TO_PASS and fail@S3: the edge cases PR1 missed (Y)',
    PR2_FAIL_TO_PASS: 'pass@S5 and fail@S4',
    PR2_PASS_TO_PASS: 'pass@S4 and pass@S5',
    flaky_tests: 'outcome changed between repeated runs of a state: in no set',
  };
  const STATE_MEANING = {
    S1: 'pr1_base + PR1\u2019s test files',
    S2: 'pr1_head (gold PR1)',
    S3: 'pr1_head + PR2\u2019s test files',
    S4: 'pr2_base + PR2\u2019s test files',
    S5: 'pr2_head',
  };
  const OUTCOME = { p: 'pass', f: 'fail', s: 'skip', '~': 'flaky', '.': '\u2014' };
  const VERDICTS = ['eligibility_verdict', 'attribution_verdict', 'fairness_verdicts', 'fairness_consensus', 'solvability_verdict', 'pr2_solvability_verdict', 'labels_verdict', 'spec_repairs'];
  const LABELS = ['severity', 'failure_mode', 'trigger_path', 'mechanism', 'difficulty', 'pr1_difficulty', 'pr1_task_type', 'pr1_code', 'clarity_score', 'pr2_spec_code', 'eval_ready'];

  /** An element; children are nodes or strings (strings become text nodes, never markup). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  const yesNo = (b) => (b === null || b === undefined ? '\u2014' : b ? 'yes' : 'no');
  const chainHref = (id) => '#chain=' + encodeURIComponent(id);
  const muted = (t) => el('span', { class: 'muted' }, t);
  const pct = (v, signed) => (v === null || v === undefined ? '\u2014' : `${signed && v > 0 ? '+' : ''}${(v * 100).toFixed(1)}%`);

  // ---- eval results (foresight eval's report.json files) ----

  const EVAL_STATUS = { p: 'pass', f: 'fail', e: 'error', s: 'skip', m: 'missing', '.': '\u2014' };
  const evalModels = data.evals.models;
  const manySplits = new Set(evalModels.map((m) => m.split)).size > 1;
  const modelLabel = (m) => (manySplits ? `${m.model} (${m.split})` : m.model);

  /** Why eval_ready is false, in words; null when it is not false. */
  const notReadyText = (r) => (r.eval_ready === false && r.eval_ready_why ? r.eval_ready_why.text : null);

  function evalReadyCell(r) {
    const why = notReadyText(r);
    if (!why) return yesNo(r.eval_ready);
    return el('span', { class: 'eval-ready-no', title: why }, 'no', el('div', { class: 'muted small eval-ready-why' }, r.eval_ready_why.flags.join(', ') || why));
  }

  function scoreCell(s) {
    if (s.kind === 'scored') {
      return el('span', { title: s.detail || null },
        `${pct(s.value)} (${s.passed}/${s.total})`,
        s.reason ? el('span', { class: 'badge warn', title: s.detail || '' }, s.reason) : null);
    }
    if (s.kind === 'infra') return el('span', { class: 'badge bad', title: s.detail }, `infra: ${s.reason}`);
    return muted('\u2014 (empty set)');
  }

  function evalsOverview() {
    const head = el('h2', null, 'Eval results');
    if (!evalModels.length) return el('section', { id: 'evals' }, head, muted(data.evals.note || 'no eval results'));
    const cols = ['model', 'split', 'X', 'Y', 'gap (X \u2212 Y)', 'graded', 'submitted', 'patch failed', 'infra', 'run'];
    const errors = evalModels.filter((m) => m.errors.length);
    const superseded = evalModels.filter((m) => m.superseded.length);
    return el('section', { id: 'evals' }, head,
      el('p', { class: 'muted small' }, 'X = share of FAIL_TO_PASS passing, Y = share of ANTICIPATION_FAIL_TO_PASS passing, averaged over the instances graded (a row without a prediction counts as 0, an infrastructure failure is outside the means); the latest run of each model.'),
      el('table', { id: 'eval-table', class: 'grid evals' },
        el('thead', null, el('tr', null, cols.map((c, i) => el('th', { class: i >= 2 && i <= 8 ? 'num' : null }, c)))),
        el('tbody', null, evalModels.map((m) => {
          const a = m.aggregate;
          return el('tr', { 'data-model': m.model, 'data-split': m.split },
            el('td', null, el('code', null, m.model)),
            el('td', null, m.split),
            el('td', { class: 'num', 'data-col': 'X' }, pct(a.mean_X)),
            el('td', { class: 'num', 'data-col': 'Y' }, pct(a.mean_Y)),
            el('td', { class: 'num', 'data-col': 'gap' }, pct(a.mean_gap, true)),
            el('td', { class: 'num', 'data-col': 'graded', title: `X over ${a.n_X}, Y over ${a.n_Y}` }, String(a.instances)),
            el('td', { class: 'num' }, `${a.submitted} of ${a.total}`),
            el('td', { class: 'num' }, String(a.patch_failed)),
            el('td', { class: 'num' }, String(a.infra)),
            el('td', null, el('code', null, `eval/${m.run}`), ' ', muted(m.finished_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z'))));
        }))),
      errors.length
        ? el('div', { class: 'small' }, errors.map((m) => el('div', null, `${modelLabel(m)}: ${m.errors.length} not graded (failure outside the patch; a rerun grades them): `,
            m.errors.slice(0, 3).map((e) => el('div', { class: 'muted' }, el('code', null, e.instance_id), ' ', e.error)))))
        : null,
      superseded.length
        ? el('div', { class: 'muted small' }, superseded.map((m) => el('div', null, `${modelLabel(m)}: earlier run(s) not shown: ${m.superseded.map((d) => 'eval/' + d).join(', ')}`)))
        : null);
  }

  function chainEvalView(r) {
    if (!evalModels.length) return muted(data.evals.note || 'no eval results');
    if (!r.evals.length) {
      const splits = new Set(evalModels.map((m) => m.split));
      if (r.split !== 'test' && splits.size === 1 && splits.has('test')) return muted(`not graded: the eval runs graded the test split, and this chain is only in ${r.split}`);
      if (!r.gradeable) return muted('not graded: eval grades only gradeable chains');
      return muted('no eval run shown graded this chain');
    }
    const evs = r.evals.map((e) => ({ e, m: evalModels[e.m] }));
    const summary = el('table', { id: 'chain-eval', class: 'grid evals' },
      el('thead', null, el('tr', null, ['model', 'result', 'X', 'Y', 'gap', 'PASS_TO_PASS regressions', 'harness files changed'].map((h) => el('th', null, h)))),
      el('tbody', null, evs.map(({ e, m }) => el('tr', { 'data-model': m.model },
        el('td', null, el('code', null, modelLabel(m))),
        el('td', null, e.kind === 'graded' ? el('span', { class: 'badge ok' }, 'graded') : el('span', { class: 'badge bad', title: e.patch_failed_detail || '' }, 'patch did not apply')),
        el('td', { 'data-col': 'X' }, scoreCell(e.x)),
        el('td', { 'data-col': 'Y' }, scoreCell(e.y)),
        el('td', { class: 'num', 'data-col': 'gap' }, pct(e.gap, true)),
        el('td', null, e.p2p_regressions === null ? muted('no evidence') : e.p2p_regressions.length ? e.p2p_regressions.map((t) => el('div', null, el('code', null, t))) : muted('none')),
        el('td', null, e.tampered_files.length ? e.tampered_files.map((t) => el('div', null, el('code', null, t))) : muted('none'))))));
    const failed = evs.filter(({ e }) => e.patch_failed_detail);
    const matrix = (sets, id) => el('table', { class: 'grid matrix eval-tests', id },
      el('thead', null, el('tr', null, el('th', null, 'test'), el('th', null, 'set'), evs.map(({ m }) => el('th', null, modelLabel(m))))),
      el('tbody', null, sets.flatMap((s) => r[s].map((t, i) => el('tr', { 'data-test': t, 'data-set': s },
        el('td', null, el('code', null, t)),
        el('td', { class: 'sets' }, SET_SHORT[s]),
        evs.map(({ e, m }) => {
          const code = e.tests[s][i] || '.';
          return el('td', { class: 'oc oc-' + EVAL_STATUS[code], 'data-model': m.model }, EVAL_STATUS[code]);
        }))))));
    const p2p = r.PASS_TO_PASS.length;
    const p2pBad = evs.map(({ e, m }) => [m, [...e.tests.PASS_TO_PASS].filter((c) => c !== 'p').length]);
    return el('div', null, summary,
      failed.map(({ e, m }) => el('div', null, el('h4', null, `${modelLabel(m)}: git apply`), el('pre', { class: 'text' }, e.patch_failed_detail))),
      el('h4', null, 'Per test: FAIL_TO_PASS (X) and ANTICIPATION_FAIL_TO_PASS (Y)'),
      matrix(['FAIL_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS'], 'eval-tests'),
      p2p
        ? el('details', { class: 'matrix-box', open: p2p <= 20 },
            el('summary', null, `PASS_TO_PASS (${p2p} test${p2p === 1 ? '' : 's'}): `, p2pBad.map(([m, n]) => `${modelLabel(m)} ${n ? `${n} not passing` : 'all pass'}`).join(', ')),
            matrix(['PASS_TO_PASS'], 'eval-tests-p2p'))
        : null);
  }

  function status(r) {
    if (r.split === 'test') return el('span', { class: 'badge ok' }, 'test');
    // A `verified` row an earlier release published that no longer holds.
    if (r.split === 'verified') return el('span', { class: 'badge warn' }, 'verified, excluded');
    return el('span', { class: 'badge ' + (r.gradeable ? 'warn' : 'bad') }, r.gradeable ? 'gradeable, excluded' : 'not gradeable');
  }

  // ---- overview: funnel, plots, table ----

  function funnel() {
    const n = rows.length;
    const gradeable = rows.filter((r) => r.gradeable).length;
    const test = rows.filter((r) => r.split === 'test').length;
    const bar = (label, count, cls, note) =>
      el('div', { class: 'funnel-row' },
        el('div', { class: 'funnel-label' }, label),
        el('div', { class: 'funnel-track' }, el('div', { class: 'funnel-bar ' + cls, style: `width:${n ? (100 * count) / n : 0}%` })),
        el('div', { class: 'funnel-count' }, String(count)),
        el('div', { class: 'funnel-note muted' }, note));
    const reasons = new Map();
    for (const r of rows) if (r.exclusion_reason) reasons.set(r.exclusion_reason, (reasons.get(r.exclusion_reason) || 0) + 1);
    const sorted = [...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    // emit's funnel plot (candidates -> test rows) reaches back before the funnel's rows: it goes here, not under Plots.
    const plot = data.plots.find((p) => /funnel/i.test(p.name));
    return el('section', { id: 'funnel' },
      el('h2', null, 'Exclusion funnel'),
      plot ? el('figure', { class: 'funnel-plot' }, el('img', { src: plot.src, alt: plot.title })) : null,
      bar('chains (funnel)', n, 'all', 'every mined chain that reached emit'),
      bar('gradeable', gradeable, 'grad', 'sets non-empty and every state ran'),
      bar('test split', test, 'test', 'passed every gate: the test and verified rows'),
      sorted.length
        ? el('table', { class: 'grid reasons' },
            el('thead', null, el('tr', null, el('th', null, 'exclusion reason'), el('th', null, 'chains'), el('th', null, 'meaning'))),
            el('tbody', null, sorted.map(([reason, count]) =>
              el('tr', null,
                el('td', null, el('code', null, reason)),
                el('td', { class: 'num' }, String(count)),
                el('td', null, data.reasons[reason] || '')))))
        : null);
  }

  function plots() {
    const shown = data.plots.filter((p) => !/funnel/i.test(p.name));
    if (!shown.length) return el('section', { id: 'plots' }, el('h2', null, 'Plots'), muted(data.plots.length ? 'no other plots' : 'no plots/*.svg in this dataset folder'));
    return el('section', { id: 'plots' },
      el('h2', null, 'Plots'),
      el('div', { class: 'plots' }, shown.map((p) => el('figure', null, el('img', { src: p.src, alt: p.title }), el('figcaption', null, p.title)))));
  }

  const COLUMNS = [
    { key: 'instance_id', label: 'instance id', value: (r) => r.instance_id, cell: (r) => el('a', { href: chainHref(r.instance_id), class: 'chain-link' }, r.instance_id) },
    { key: 'split', label: 'status', value: (r) => (r.split === 'test' ? 0 : r.gradeable ? 1 : 2), cell: status },
    { key: 'mining_category', label: 'mining', value: (r) => r.mining_category },
    { key: 'exclusion_reason', label: 'exclusion reason', value: (r) => r.exclusion_reason || '', cell: (r) => (r.exclusion_reason ? el('code', { title: r.exclusion_detail || '' }, r.exclusion_reason) : muted('\u2014')) },
    ...['FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'flaky_tests'].map((s) => ({ key: s, label: SET_SHORT[s], title: s, num: true, value: (r) => r[s].length })),
    { key: 'severity', label: 'severity', value: (r) => r.severity || '' },
    { key: 'eval_ready', label: 'eval ready', value: (r) => yesNo(r.eval_ready), cell: evalReadyCell },
    ...(evalModels.length
      ? [{ key: 'eval', label: 'eval X / Y', title: 'each model\u2019s X / Y on the chain', value: (r) => (r.evals.length ? r.evals[0].X ?? -1 : -2), cell: (r) =>
          r.evals.length
            ? r.evals.map((e) => el('div', { class: 'small' }, el('code', null, modelLabel(evalModels[e.m])), ` ${pct(e.X)} / ${pct(e.Y)}`))
            : muted('\u2014') }]
      : []),
  ];

  const filters = { text: '', reason: '', split: '' };
  const sort = { key: null, dir: 1 };
  let visible = rows.slice();

  function matches(r) {
    if (filters.reason === '(none)' && r.exclusion_reason) return false;
    if (filters.reason && filters.reason !== '(none)' && r.exclusion_reason !== filters.reason) return false;
    if (filters.split === 'test' && r.split !== 'test') return false;
    if (filters.split === 'funnel' && r.split === 'test') return false;
    if (filters.split === 'gradeable' && !r.gradeable) return false;
    if (filters.split === 'not-gradeable' && r.gradeable) return false;
    if (!filters.text) return true;
    const hay = [r.instance_id, r.mining_category, r.exclusion_reason, r.exclusion_detail, r.severity, r.split].join(' ').toLowerCase();
    return filters.text.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
  }

  const tbody = el('tbody');
  const countLabel = el('span', { id: 'filter-count' });
  function renderTable() {
    visible = rows.filter(matches);
    if (sort.key) {
      const col = COLUMNS.find((c) => c.key === sort.key);
      visible.sort((a, b) => {
        const x = col.value(a);
        const y = col.value(b);
        return sort.dir * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)));
      });
    }
    tbody.replaceChildren(...visible.map((r) =>
      el('tr', { 'data-id': r.instance_id }, COLUMNS.map((c) => el('td', { class: c.num ? 'num' : null }, c.cell ? c.cell(r) : String(c.value(r)))))));
    countLabel.textContent = `${visible.length} of ${rows.length} chains`;
  }

  function table() {
    const reasonCounts = new Map();
    for (const r of rows) if (r.exclusion_reason) reasonCounts.set(r.exclusion_reason, (reasonCounts.get(r.exclusion_reason) || 0) + 1);
    const none = rows.filter((r) => !r.exclusion_reason).length;
    const reason = el('select', { id: 'filter-reason', 'aria-label': 'exclusion reason', onchange: (e) => { filters.reason = e.target.value; renderTable(); } },
      el('option', { value: '' }, 'any exclusion reason'),
      el('option', { value: '(none)' }, `none (${none})`),
      [...reasonCounts].sort().map(([k, n]) => el('option', { value: k }, `${k} (${n})`)));
    const split = el('select', { id: 'filter-split', 'aria-label': 'split', onchange: (e) => { filters.split = e.target.value; renderTable(); } },
      el('option', { value: '' }, 'every chain'),
      el('option', { value: 'test' }, 'test split'),
      el('option', { value: 'funnel' }, 'funnel only (not in test)'),
      el('option', { value: 'gradeable' }, 'gradeable'),
      el('option', { value: 'not-gradeable' }, 'not gradeable'));
    const text = el('input', { id: 'filter-text', type: 'search', placeholder: 'filter: id, mining category, reason, detail, severity', oninput: (e) => { filters.text = e.target.value.trim(); renderTable(); } });
    const head = el('tr', null, COLUMNS.map((c) =>
      el('th', { class: c.num ? 'num sortable' : 'sortable', title: c.title || null, onclick: () => {
        sort.dir = sort.key === c.key ? -sort.dir : 1;
        sort.key = c.key;
        renderTable();
      } }, c.label)));
    renderTable();
    return el('section', { id: 'chains' },
      el('h2', null, 'Chains'),
      el('div', { class: 'filters' }, text, reason, split, countLabel),
      el('table', { id: 'chain-table', class: 'grid chains' }, el('thead', null, head), tbody));
  }

  const overview = el('div', { id: 'overview' }, evalsOverview(), funnel(), plots(), table());

  // ---- one chain ----

  let diffFormat = 'line-by-line';

  function diffView(id, parts) {
    const text = parts.filter((p) => p && p.trim()).map((p) => (p.endsWith('\n') ? p : p + '\n')).join('');
    const box = el('div', { class: 'diff', id });
    if (!text) {
      box.append(muted('no changes'));
      return box;
    }
    // diff2html escapes every file name and line it renders.
    box.innerHTML = Diff2Html.html(text, { drawFileList: true, matching: 'lines', outputFormat: diffFormat, diffStyle: 'word' });
    return box;
  }

  function textBlock(field, label, value) {
    return el('div', { class: 'statement' }, el('h4', null, label, ' ', el('code', { class: 'muted' }, field)),
      value ? el('pre', { class: 'text', 'data-field': field }, value) : muted('none'));
  }

  function jsonView(v) {
    if (v === null || v === undefined) return muted('null');
    if (Array.isArray(v)) return v.length ? el('ol', { class: 'json' }, v.map((x) => el('li', null, jsonView(x)))) : muted('[]');
    if (typeof v === 'object') {
      const entries = Object.entries(v);
      return entries.length ? el('dl', { class: 'json' }, entries.map(([k, x]) => [el('dt', null, k), el('dd', null, jsonView(x))])) : muted('{}');
    }
    return el('span', { class: 'json-' + typeof v }, String(v));
  }

  function setsView(r) {
    return el('div', { class: 'sets' }, SETS.map((s) =>
      el('details', { class: 'set', 'data-set': s, open: r[s].length > 0 && r[s].length <= 20 },
        el('summary', null, el('code', null, s), ` (${r[s].length}) `, muted(SET_MEANING[s])),
        r[s].length ? el('ul', null, r[s].map((t) => el('li', null, el('code', null, t)))) : muted('empty'))));
  }

  function outcomeText(o) {
    if (o.kind === 'ran') return el('span', { class: 'badge ok' }, 'ran');
    return el('span', { class: 'badge bad', title: o.detail }, `${o.kind}: ${o.reason}`);
  }

  function statesView(r) {
    const st = r.states;
    if (!st) {
      if (data.statesNote) return muted(data.statesNote);
      if (data.staleStates.includes(r.instance_id)) return muted('per-state outcomes not shown: validate ran again after emit and no longer gives these sets');
      return muted('no per-state outcomes: the chain was excluded before its tests ran');
    }
    const summary = el('table', { class: 'grid states' },
      el('thead', null, el('tr', null, ['state', 'what runs', 'outcome', 'checkout', 'overlay', 'runs', 'time', 'collection errors'].map((h) => el('th', null, h)))),
      el('tbody', null, st.states.map((s) => el('tr', null,
        el('td', null, el('b', null, s.name)),
        el('td', null, STATE_MEANING[s.name] || ''),
        el('td', null, outcomeText(s.outcome), s.outcome.kind === 'ran' ? null : el('div', { class: 'muted small' }, s.outcome.detail)),
        el('td', null, el('code', null, s.checkout.slice(0, 12))),
        el('td', null, s.overlay ? el('code', null, s.overlay.slice(0, 12)) : muted('\u2014')),
        el('td', { class: 'num' }, String(s.runs)),
        el('td', { class: 'num' }, `${(s.durationMs / 1000).toFixed(1)} s`),
        el('td', null, s.collectionErrors.length ? s.collectionErrors.map((c) => el('div', null, el('code', null, c))) : muted('none'))))));
    const member = new Map();
    for (const s of SETS) for (const t of r[s]) member.set(t, [...(member.get(t) || []), SET_SHORT[s]]);
    const names = [...new Set([...st.tests, ...member.keys()])].sort();
    const index = new Map(st.tests.map((t, i) => [t, i]));
    const matrix = el('table', { class: 'grid matrix' },
      el('thead', null, el('tr', null, el('th', null, 'test'), st.states.map((s) => el('th', { title: STATE_MEANING[s.name] || '' }, s.name)), el('th', null, 'sets'))),
      el('tbody', null, names.map((t) => el('tr', null,
        el('td', null, el('code', null, t)),
        st.states.map((s) => {
          const code = index.has(t) ? s.outcomes[index.get(t)] : '.';
          return el('td', { class: 'oc oc-' + OUTCOME[code] }, OUTCOME[code]);
        }),
        el('td', { class: 'sets' }, (member.get(t) || []).join(', '))))));
    return el('div', null, summary,
      el('details', { class: 'matrix-box', open: names.length <= 60 }, el('summary', null, `every test per state (${names.length} tests)`), matrix));
  }

  function chainView(r) {
    const i = visible.findIndex((x) => x.instance_id === r.instance_id);
    const prev = i > 0 ? visible[i - 1] : null;
    const next = i >= 0 && i < visible.length - 1 ? visible[i + 1] : null;
    const commits = [
      ['base_commit', 'PR1\u2019s base: where the task starts'],
      ['pr1_head_sha', 'PR1 merged (the gold solution)'],
      ['pr2_base_sha', 'PR2\u2019s base'],
      ['pr2_head_sha', 'PR2 merged (the fix of the missed edge case)'],
    ];
    const diffs = [['diff-pr1', [r.patch, r.test_patch]], ['diff-pr2', [r.anticipation_patch, r.anticipation_test_patch]]];
    const toggleLabel = () => (diffFormat === 'line-by-line' ? 'side by side' : 'line by line');
    const toggle = el('button', { type: 'button', id: 'diff-format', onclick: () => {
      diffFormat = diffFormat === 'line-by-line' ? 'side-by-side' : 'line-by-line';
      toggle.textContent = toggleLabel();
      for (const [id, parts] of diffs) document.getElementById(id).replaceWith(diffView(id, parts));
    } }, toggleLabel());
    // The long parts (diffs, the test matrix) come after the short ones; the sticky bar jumps between them.
    const sections = [
      ['eval', 'Eval results', chainEvalView(r)],
      ['commits', 'Commits', el('table', { class: 'grid commits' }, el('tbody', null,
        commits.map(([k, what]) => el('tr', null, el('th', null, k), el('td', null, el('code', { 'data-commit': k }, r[k] || '\u2014')), el('td', { class: 'muted' }, what))),
        el('tr', null, el('th', null, 'created_at'), el('td', null, r.created_at || '\u2014'), el('td', { class: 'muted' }, 'PR1 merged')),
        el('tr', null, el('th', null, 'pr2_created_at'), el('td', null, r.pr2_created_at || '\u2014'), el('td', { class: 'muted' }, `PR2 merged, ${r.gap_days ?? '?'} days later`))))],
      ['statements', 'Statements', [
        textBlock('problem_statement', 'The task (from PR1 alone)', r.problem_statement),
        r.problem_statement_raw !== r.problem_statement ? textBlock('problem_statement_raw', 'PR1 as written', r.problem_statement_raw) : null,
        r.pr2_problem_statement ? textBlock('pr2_problem_statement', 'PR2\u2019s synthesised statement', r.pr2_problem_statement) : null,
        textBlock('pr2_problem_statement_raw', 'PR2 as written', r.pr2_problem_statement_raw)]],
      ['sets', 'Test sets', setsView(r)],
      ['verdicts', 'Judge verdicts', el('dl', { class: 'json top' }, VERDICTS.map((k) => [el('dt', null, k), el('dd', null, r[k] === null ? muted('no judge answered') : jsonView(r[k]))]))],
      ['labels', 'Labels', el('dl', { class: 'json top' }, LABELS.map((k) => [el('dt', null, k), el('dd', { 'data-label': k }, r[k] === null ? muted('\u2014') : typeof r[k] === 'boolean' ? yesNo(r[k]) : String(r[k]),
        k === 'eval_ready' && notReadyText(r) ? [' \u2014 ', el('span', { class: 'eval-ready-why' }, notReadyText(r)), muted(r.eval_ready_why.source === 'quality' ? ' (the row\u2019s quality flags)' : ' (from the verdicts)')] : null)]))],
      ['evidence', 'Mining evidence', jsonView(r.mining_evidence)],
      ['diffs', 'Diffs', [
        el('div', null, toggle),
        el('h4', null, 'PR1: ', el('code', null, 'patch'), ' + ', el('code', null, 'test_patch')),
        diffView(...diffs[0]),
        el('h4', null, 'PR2: ', el('code', null, 'anticipation_patch'), ' + ', el('code', null, 'anticipation_test_patch')),
        diffView(...diffs[1])]],
      ['states', 'States S1\u2013S5', statesView(r)],
    ];
    const jump = (id) => () => document.getElementById('sec-' + id).scrollIntoView({ block: 'start' });
    return el('article', { id: 'chain', 'data-id': r.instance_id },
      el('nav', { class: 'chain-nav' },
        el('a', { href: '#', id: 'back' }, '\u2190 all chains'),
        prev ? el('a', { href: chainHref(prev.instance_id), id: 'prev' }, '\u2039 ' + prev.instance_id) : null,
        next ? el('a', { href: chainHref(next.instance_id), id: 'next' }, next.instance_id + ' \u203a') : null),
      el('h2', null, r.instance_id, ' ', status(r), ' ', el('span', { class: 'badge' }, r.mining_category)),
      el('section', { class: 'exclusion' },
        r.exclusion_reason
          ? [el('p', null, 'Excluded: ', el('code', { id: 'exclusion-reason' }, r.exclusion_reason), ' \u2014 ', data.reasons[r.exclusion_reason] || ''),
             r.exclusion_detail ? el('pre', { class: 'text', 'data-field': 'exclusion_detail' }, r.exclusion_detail) : null]
          : el('p', null, 'Not excluded: in the test split.'),
        notReadyText(r) ? el('p', { id: 'eval-ready' }, 'eval ready: no \u2014 ', el('span', { class: 'eval-ready-why' }, notReadyText(r))) : r.eval_ready ? el('p', { id: 'eval-ready' }, 'eval ready: yes') : null),
      el('nav', { class: 'section-nav' }, sections.map(([id, title]) => el('button', { type: 'button', onclick: jump(id) }, title))),
      sections.map(([id, title, body]) => el('section', { id: 'sec-' + id }, el('h3', null, title), body)));
  }

  // ---- routing: #chain=<instance_id> shows one chain, anything else the overview ----

  const view = el('div', { id: 'view' });
  let overviewScroll = 0;
  function route() {
    const m = /^#chain=(.*)$/.exec(location.hash);
    let id = null;
    if (m) {
      try {
        id = decodeURIComponent(m[1]);
      } catch {
        id = m[1];
      }
    }
    if (id === null) {
      view.replaceChildren();
      overview.hidden = false;
      window.scrollTo(0, overviewScroll);
      return;
    }
    if (!overview.hidden) overviewScroll = window.scrollY;
    overview.hidden = true;
    const r = byId.get(id);
    view.replaceChildren(r ? chainView(r) : el('p', { id: 'chain-missing' }, 'No chain ', el('code', null, id), ' in this dataset. ', el('a', { href: '#' }, 'all chains')));
    window.scrollTo(0, 0);
  }
  // diff2html's file list links to #d2h-<n>: scroll there without leaving the chain's address.
  view.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href^="#d2h-"]') : null;
    if (!a) return;
    e.preventDefault();
    const target = document.getElementById(a.getAttribute('href').slice(1));
    if (target) target.scrollIntoView({ block: 'start' });
  });

  app.replaceChildren(overview, view);
  window.addEventListener('hashchange', route);
  route();
  document.documentElement.dataset.ready = 'true';
})();

// Drives Debian's chromium (headless, through puppeteer-core) over a report `hotline html`
// wrote, opened from disk as a person would, and checks what the issue asks of it. Exits 0 when
// every check passes, 1 with one line per failure otherwise.
//
//   node report_test.js main REPORT HOT_FUNCTION COLD_FUNCTION SOURCE HOT_LINE SCREENSHOT
//       no console or page errors on any page; the flame graph draws HOT_FUNCTION wider than
//       COLD_FUNCTION; clicking HOT_FUNCTION in the functions table, then its source link, shows
//       SOURCE with HOT_LINE highlighted and the calling line's time given to HOT_FUNCTION, its
//       sandwich naming main among its callers; no page is wider than a 1400x900 or 1920x1080 window;
//       screenshots of the main page and the functions page go beside SCREENSHOT
//   node report_test.js hostile REPORT     hostile names and sources run no script
//   node report_test.js heap REPORT        the heap page draws without errors
//   node report_test.js watches REPORT NAME...  one chart per watched variable, each named
//   node report_test.js timeline REPORT    a timed trace's calls are drawn; a click zooms in
//   node report_test.js timing REPORT      prints the milliseconds until the flame graph is drawn
//   node report_test.js functions-all REPORT MIN
//       the functions table holds every function with time or calls (MIN or more), drawn a
//       window at a time
//   node report_test.js source-timing REPORT SOURCE LINE
//       prints the milliseconds until SOURCE's page is drawn at LINE and the rows it holds; LINE is
//       highlighted, and scrolling to the end draws the last line
//   node report_test.js diff REPORT SLOWER SCREENSHOT
//       a differential report (hotline html --diff): its graph draws in every shape and order with
//       no errors, the frame of SLOWER is marked slower and coloured red, the changes page draws
//       hotline diff's tables with SLOWER grown; a screenshot of the graph goes to SCREENSHOT
//   node report_test.js complexity REPORT FUNCTION MEASURED MODEL POINTS SCREENSHOT
//       the complexity page draws a plot per row with no errors, decided rows first; FUNCTION's
//       MEASURED plot is decided as MODEL with POINTS points drawn, its curve passing within 3
//       pixels of each; undecided plots draw only dashed candidates; a link to a plot shows it
//   node report_test.js history REPORT SERIES
//       a history page draws SERIES charts, each with its points, with no errors; hovering a
//       point shows its commit
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');

const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
}

async function openBrowser() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

// A page that records every console error, page error, failed request and dialog.
async function watchedPage(browser) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  page.problems = [];
  page.dialogs = [];
  page.on('console', m => { if (m.type() === 'error') page.problems.push('console: ' + m.text()); });
  page.on('pageerror', e => page.problems.push('page error: ' + e.message));
  page.on('requestfailed', r => page.problems.push('request failed: ' + r.url()));
  page.on('dialog', async d => { page.dialogs.push(d.message()); await d.dismiss(); });
  return page;
}

// Runs `body` on a watched page of a browser of its own, then checks the page met no errors.
async function withPage(body) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await body(page);
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

function url(report, hash) {
  return 'file://' + path.resolve(report, 'index.html') + (hash ? '#' + hash : '');
}

// Goes to a page of the report and waits until it says it is drawn.
async function visit(page, report, hash) {
  if (page.url().startsWith('file://')) {
    await page.evaluate(h => { location.hash = h; }, hash || 'overview');
  } else {
    await page.goto(url(report, hash), { waitUntil: 'load' });
  }
  await page.waitForSelector('body[data-ready]', { timeout: 10000 });
}

// No page is wider than the window: what does not fit scrolls inside its own box.
async function checkFits(page, what) {
  const [wide, window] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  check(wide <= window, `${what}: the page is ${wide} px wide in a window of ${window}`);
}

async function main(report, hot, cold, source, hotLine, screenshot) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'overview');
    await page.screenshot({ path: screenshot, fullPage: false });
    const firstSource = await page.evaluate(() => window.HOTLINE.data.files.findIndex(f => f.source) + 1);
    for (const size of [{ width: 1400, height: 900 }, { width: 1920, height: 1080 }]) {
      await page.setViewport(size);
      for (const hash of ['overview', 'functions', 'function/0', 'sources', `source/${firstSource}`, 'tables/T', 'tables/G', 'tables/P', 'flame']) {
        await visit(page, report, hash);
        await checkFits(page, `${hash} at ${size.width}x${size.height}`);
      }
      await visit(page, report, 'functions');
      await page.screenshot({ path: screenshot.replace(/\.png$/, `-functions-${size.width}.png`) });
    }
    await page.setViewport({ width: 1400, height: 900 });
    // The tables name functions and sources as links.
    await visit(page, report, 'tables/M');
    const tableLinks = await page.$$eval('pre.table-text a', as => as.map(a => [a.textContent, a.getAttribute('href')]));
    check(tableLinks.some(([text, href]) => text === hot && href.startsWith('#function/')), `tables: ${hot} is not a link in -M: ${JSON.stringify(tableLinks)}`);

    await visit(page, report, 'flame');
    const widths = await page.evaluate(() => {
      const out = {};
      for (const d of document.querySelectorAll('#flame .frame')) {
        const name = d.textContent;
        out[name] = Math.max(out[name] || 0, d.getBoundingClientRect().width);
      }
      return out;
    });
    check(widths[hot] > 0, `flame graph: no frame named ${hot} (frames: ${Object.keys(widths).join(', ')})`);
    check(!(widths[cold] >= widths[hot]), `flame graph: ${hot} (${widths[hot]}px) is not wider than ${cold} (${widths[cold]}px)`);
    await page.screenshot({ path: screenshot.replace(/\.png$/, '-flame.png') });
    // The other shapes and orders draw too, and search marks the hot function.
    await page.click('#flame-order');
    await page.waitForSelector('body[data-ready]');
    await page.click('#flame-shape');
    await page.waitForSelector('body[data-ready]');
    await page.type('#flame-search', hot);
    await page.waitForSelector('body[data-ready]');
    const matches = await page.$$eval('#flame .frame.match', ds => ds.length);
    check(matches > 0, `flame graph: searching ${hot} marks no frame`);

    // The functions table: click the hot function, then the link to its hottest line.
    await visit(page, report, 'functions');
    await page.type('#function-filter', hot);
    const link = await page.$$eval('table.functions a.fname', (as, hot) => {
      const a = as.find(x => x.textContent === hot);
      return a ? a.getAttribute('href') : null;
    }, hot);
    check(link, `functions table: no row for ${hot}`);
    if (link) {
      await page.click(`table.functions a.fname[href="${link}"]`);
      await page.waitForSelector('#function-detail a.hotline-link', { timeout: 5000 });
      // The sandwich: main among the callers merged over all of the hot function's stacks.
      await page.waitForSelector('#sandwich-callers', { timeout: 5000 });
      const callers = await page.$$eval('#sandwich-callers a.fname', as => as.map(a => a.textContent));
      check(callers.includes('main'), `sandwich: main is not among ${hot}'s callers: ${callers.join(', ')}`);
      await page.click('#function-detail a.hotline-link');
      await page.waitForSelector('table.source tr.target', { timeout: 5000 });
      const shown = await page.evaluate(() => ({
        title: document.querySelector('main h1').textContent,
        line: document.querySelector('table.source tr.target').id,
      }));
      check(shown.title.endsWith(source), `source page: shows ${shown.title}, not ${source}`);
      check(shown.line === 'L' + hotLine, `source page: highlights ${shown.line}, not line ${hotLine}`);
      await checkFits(page, 'the hot function\'s detail and source');
      // The line that calls it says how much time went to it.
      const calls = await page.$$eval('table.source tr.callrow', rs => rs.map(r => r.textContent));
      check(calls.some(c => c.startsWith('→ ' + hot + ' ')), `source page: no row for the time a line gave ${hot}: ${calls.join(' | ')}`);
      await page.screenshot({ path: screenshot.replace(/\.png$/, '-source.png') });
    }
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function hostile(report) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'overview');
    const files = await page.evaluate(() => window.HOTLINE.data.files.map((f, i) => f.source ? i : -1).filter(i => i >= 0));
    const pages = ['functions', 'flame', 'sources', 'tables/T', 'tables/G', 'tables/C', 'tables/M'];
    for (const f of files) pages.push('source/' + (f + 1));  // numbered from 1, as report's
    const names = await page.evaluate(() => window.HOTLINE.data.functions.name.length);
    for (let i = 0; i < names; ++i) pages.push('function/' + i);
    for (const hash of pages) await visit(page, report, hash);
    // Give a planted onerror time to fire.
    await new Promise(r => setTimeout(r, 300));
    const pwned = await page.evaluate(() => window.__hotline_pwned);
    check(pwned === undefined, 'a script from the profile ran: window.__hotline_pwned = ' + pwned);
    check(page.dialogs.length === 0, 'a dialog opened: ' + page.dialogs.join(' | '));
    const images = await page.evaluate(() => document.querySelectorAll('main img').length);
    check(images === 0, `${images} <img> elements were made from the profile's text`);
    // The text itself is shown, as text.
    const hostileFile = await page.evaluate(() => window.HOTLINE.data.files.findIndex(f => f.path.endsWith('html_hostile.cc')));
    check(hostileFile >= 0, 'html_hostile.cc is not among the sources');
    await visit(page, report, 'source/' + (hostileFile + 1));
    const text = await page.evaluate(() => document.querySelector('table.source').textContent);
    check(text.includes('</script>'), 'the hostile source text is not shown as text');
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function heap(report) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'heap');
    const chart = await page.$$eval('svg.chart polyline', ps => ps.length);
    check(chart === 1, 'heap page: no chart of live bytes');
    // Sites come with the callers they were reached from (heap_sites.cc's vector grows in
    // analytics::crunch, called from stage_a and stage_b).
    const chains = await page.$$eval('div.chains div', ds => ds.map(d => d.textContent));
    check(chains.some(c => c.includes('← stage_a(')), 'heap page: no caller chain through stage_a: ' + chains.join(' | '));
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

// The watched-variables page: one value-over-time chart per variable that was written, each a
// step line through its writes, and the summary table naming every variable.
async function watches(report, ...names) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'watches');
    const charts = await page.$$eval('svg.chart polyline.live', ps => ps.map(p => p.getAttribute('points').split(' ').length));
    check(charts.length === names.length, 'watch page: ' + charts.length + ' charts for ' + names.length + ' variables');
    check(charts.every(n => n >= 2), 'watch page: a chart without its steps');
    const cells = await page.$$eval('td', ts => ts.map(t => t.textContent));
    for (const name of names) check(cells.includes(name), 'watch page: no row for ' + name);
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function timeline(report) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'timeline');
    const titles = await page.$$eval('div.call', ds => ds.map(d => d.getAttribute('title')));
    check(titles.some(t => t.startsWith('main\n')), 'timeline: no call of main drawn');
    // Calls narrower than a pixel are not drawn: on a busy machine one preempted call can take
    // most of the width, and fewer of fib(20)'s 21891 calls are wide enough.
    check(titles.filter(t => t.startsWith('fib\n')).length > 20, 'timeline: too few calls of fib drawn');
    // A click on a call of fib below the outermost zooms to it: it then spans the whole width.
    const share = await page.evaluate(() => {
      const fib = [...document.querySelectorAll('div.call')]
        .filter(d => d.getAttribute('title').startsWith('fib\n') && d.offsetTop > 20)
        .sort((a, b) => a.offsetTop - b.offsetTop || b.offsetLeft - a.offsetLeft)[0];
      const start = fib.getAttribute('data-start'), top = fib.offsetTop;
      fib.click();
      const zoomed = [...document.querySelectorAll('div.call')].find(d => d.getAttribute('data-start') === start &&
        d.getAttribute('title').startsWith('fib\n') && d.offsetTop === top);
      return zoomed ? zoomed.offsetWidth / zoomed.parentElement.clientWidth : 0;
    });
    check(share > 0.95, 'timeline: a click did not zoom to the call (it spans ' + share + ' of the width)');
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function timing(report) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    const start = Date.now();
    await page.goto(url(report, 'flame'), { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready]', { timeout: 60000 });
    const drawn = Date.now() - start;
    const frames = await page.$$eval('#flame .frame', ds => ds.length);
    const t0 = Date.now();
    await visit(page, report, 'functions');
    const functions = Date.now() - t0;
    console.log(`flame graph drawn after ${drawn} ms (${frames} frames); functions table after ${functions} ms`);
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

// A source page opened from a link, as a person follows one: the milliseconds until it is
// drawn with LINE shown, and how many rows exist (a window of the file, not all of it).
async function sourceTiming(report, source, line) {
  await withPage(async page => {
    await visit(page, report, 'overview');
    const file = await page.evaluate(s => window.HOTLINE.data.files.findIndex(f => f.path.endsWith(s)), source);
    check(file >= 0, `no file ${source} in the report`);
    const start = Date.now();
    await visit(page, report, `source/${file + 1}/${line}`);
    const drawn = Date.now() - start;
    const shown = await page.evaluate(() => ({
      rows: document.querySelectorAll('table.source tbody tr:not(.spacer)').length,
      lines: Number(document.querySelector('table.source').getAttribute('data-lines')),
      target: (document.querySelector('table.source tr.target') || {}).id,
    }));
    check(shown.target === 'L' + line, `source page: line ${line} is not shown (${shown.target})`);
    check(shown.lines < 2000 || shown.rows < 1000, `source page: ${shown.rows} rows drawn of ${shown.lines} lines, not a window`);
    // The last line is reached by scrolling.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await new Promise(r => setTimeout(r, 200));
    const last = await page.evaluate(() => !!document.getElementById('L' + document.querySelector('table.source').getAttribute('data-lines')));
    check(last, 'source page: scrolling to the end does not draw the last line');
    console.log(`source of ${shown.lines} lines drawn at line ${line} after ${drawn} ms, ${shown.rows} rows in the page`);
  });
}

// The functions table holds every function with time or calls, MIN or more, a window of rows
// at a time: scrolling to its end draws other rows.
async function functionsAll(report, min) {
  await withPage(async page => {
    await visit(page, report, 'functions');
    const expected = await page.evaluate(() => {
      const F = window.HOTLINE.data.functions;
      return F.name.filter((_, i) => F.inclusive[i] > 0 || F.calls[i] > 0).length;
    });
    check(expected >= Number(min), `functions table: only ${expected} functions in the data, not ${min}`);
    const note = await page.$eval('p.note', n => n.textContent);
    check(note === `${expected} functions`, `functions table: says "${note}" of ${expected}`);
    const ids = () => page.$$eval('table.functions tbody tr[data-function]', rs => rs.map(r => r.getAttribute('data-function')));
    const before = await ids();
    check(before.length < expected, `functions table: ${before.length} rows drawn of ${expected}, not a window`);
    await page.evaluate(() => { const s = document.querySelector('.split .scroll'); s.scrollTop = s.scrollHeight; });
    await new Promise(r => setTimeout(r, 300));
    const after = await ids();
    check(after.some(id => !before.includes(id)), 'functions table: scrolling to the end draws no other row');
  });
}

async function diff(report, slower, screenshot) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'diff');
    const frames = () => page.$$eval('#flame .frame', ds => ds.map(d => ({
      name: d.textContent, state: d.getAttribute('data-state'), colour: getComputedStyle(d).backgroundColor,
    })));
    const drawn = await frames();
    check(drawn.length > 3, `diff: only ${drawn.length} frames drawn`);
    const hot = drawn.find(f => f.name === slower);
    check(hot && hot.state === 'slower', `diff: ${slower} is not marked slower (${JSON.stringify(hot)})`);
    // Red: the red channel above the others.
    const rgb = hot ? hot.colour.match(/\d+/g).map(Number) : [0, 0, 0];
    check(rgb[0] > rgb[1] + 40 && rgb[0] > rgb[2] + 40, `diff: ${slower} is not red (${hot && hot.colour})`);
    const missing = await page.$eval('#diff-missing', d => d.textContent);
    check(/BASE's time/.test(missing), 'diff: the page does not say how much of BASE has no place in the graph: ' + missing);
    await page.screenshot({ path: screenshot });
    // BASE's shape, callees first, icicle: all draw.
    for (const button of ['#flame-side', '#flame-order', '#flame-shape']) {
      await page.click(button);
      await page.waitForSelector('body[data-ready]');
      check((await frames()).length > 3, `diff: nothing drawn after ${button}`);
    }
    const side = await page.$eval('#flame-side', b => b.textContent);
    check(side === 'base\'s shape', 'diff: the shape toggle says ' + side);
    const tip = await page.$$eval('#flame .frame', ds => ds.map(d => d.getAttribute('title')).find(t => /\nbase .*, new /.test(t)));
    check(tip && /change [+-]/.test(tip), 'diff: no frame tells its base and new time and change: ' + tip);
    await page.type('#flame-search', slower);
    await page.waitForSelector('body[data-ready]');
    check(await page.$$eval('#flame .frame.match', ds => ds.length) > 0, `diff: searching ${slower} marks no frame`);
    await visit(page, report, 'changes');
    const verdicts = await page.$$eval('table.grid tr', rs => rs.map(r => r.textContent));
    // Its verdict also needs the change surely beyond 5%, which one run a side may not show.
    check(verdicts.some(r => r.includes(slower) && r.includes('+')), `diff: the changes tables have no row of ${slower} grown`);
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function complexity(report, fn, measured, model, points, screenshot) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'complexity');
    const plots = await page.$$eval('section.cx-plot', ss => ss.map(s => ({
      name: s.getAttribute('data-name'), measured: s.getAttribute('data-measured'), verdict: s.getAttribute('data-verdict'),
      svg: s.querySelectorAll('svg.cx-chart').length, points: s.querySelectorAll('circle.cx-point').length,
      decided: s.querySelectorAll('polyline.cx-curve.decided').length, candidates: s.querySelectorAll('polyline.cx-curve.candidate').length,
    })));
    const rows = await page.$$eval('#cx-table tbody tr', rs => rs.length);
    check(plots.length > 0 && plots.length === rows, `complexity: ${plots.length} plots for ${rows} table rows`);
    const rank = v => ['decided', 'undecided', 'too few'].indexOf(v);
    check(plots.every((p, i) => i === 0 || rank(plots[i - 1].verdict) <= rank(p.verdict)), 'complexity: decided plots do not come first');
    check(plots.every(p => p.svg === 1 && p.points > 0), 'complexity: a plot without its chart or points');
    check(plots.every(p => p.verdict !== 'decided' || (p.decided === 1 && p.candidates === 0)), 'complexity: a decided plot does not draw exactly its model');
    check(plots.every(p => p.verdict !== 'undecided' || (p.decided === 0 && p.candidates >= 1)), 'complexity: an undecided plot does not draw its candidates dashed');
    const index = plots.findIndex(p => p.name === fn && p.measured === measured);
    check(index >= 0, `complexity: no plot of ${fn} ${measured}`);
    // The decided curve's height at each point's x (between the vertices on either side), less
    // the point's: in SVG units, which are pixels at the chart's size.
    const measure = () => page.evaluate((index) => {
      const s = document.querySelectorAll('section.cx-plot')[index];
      const facts = {};
      const dts = s.querySelectorAll('dl.facts dt');
      for (const dt of dts) facts[dt.textContent] = dt.nextElementSibling.textContent;
      const curve = s.querySelector('polyline.cx-curve.decided');
      const vertices = curve ? curve.getAttribute('points').split(' ').map(p => p.split(',').map(Number)) : [];
      const off = [...s.querySelectorAll('circle.cx-point')].map(c => {
        const x = Number(c.getAttribute('cx')), y = Number(c.getAttribute('cy'));
        const k = vertices.findIndex(v => v[0] >= x - 1e-6);
        if (k < 0) return Infinity;
        if (k === 0 || vertices[k][0] <= x + 1e-6) return Math.abs(vertices[k][1] - y);
        const [x0, y0] = vertices[k - 1], [x1, y1] = vertices[k];
        return Math.abs(y0 + (y1 - y0) * (x - x0) / (x1 - x0) - y);
      });
      return { id: s.id, facts, off, model: curve && curve.getAttribute('data-model') };
    }, index);
    if (index >= 0) {
      const shown = await measure();
      check(plots[index].verdict === 'decided' && shown.facts.model === model && shown.model === model,
        `complexity: ${fn} ${measured} is ${plots[index].verdict} ${shown.facts.model} (curve ${shown.model}), not decided ${model}`);
      check(plots[index].points === Number(points), `complexity: ${fn} ${measured} draws ${plots[index].points} points, not ${points}`);
      check(shown.off.length > 0 && shown.off.every(d => d <= 3), `complexity: ${fn}'s curve misses its points by ${shown.off.map(d => d.toFixed(1)).join(', ')} pixels`);
      // On a log scale of values too.
      await page.click('#cx-scale');
      const logged = await measure();
      check(logged.off.length === shown.off.length && logged.off.every(d => d <= 3), `complexity: on a log scale ${fn}'s curve misses its points by ${logged.off.map(d => d.toFixed(1)).join(', ')} pixels`);
      await page.click('#cx-scale');
      // A link to the plot shows it, marked.
      await visit(page, report, 'complexity/' + shown.id.replace('cx-', ''));
      const marked = await page.$eval('#' + shown.id, s => s.classList.contains('selected'));
      check(marked, 'complexity: the plot a link names is not marked');
      const box = await page.$('#' + shown.id);
      if (box) await box.screenshot({ path: screenshot });
    }
    // The measure filter keeps only that measure's rows.
    await page.select('#cx-measure', measured);
    const kept = await page.$$eval('section.cx-plot', ss => ss.map(s => s.getAttribute('data-measured')));
    check(kept.length > 0 && kept.every(m => m === measured), `complexity: the filter on ${measured} keeps ${kept.join(', ')}`);
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

async function history(report, series) {
  const browser = await openBrowser();
  try {
    const page = await watchedPage(browser);
    await visit(page, report, 'history');
    const charts = await page.$$eval('svg.history-chart', ss => ss.map(s => s.querySelectorAll('circle.point').length));
    check(charts.length === Number(series), `history: ${charts.length} charts drawn for ${series} series`);
    check(charts.every(points => points > 0), 'history: a chart without points: ' + charts.join(', '));
    const point = await page.$('svg.history-chart circle.point');
    if (point) {
      await point.hover();
      const tip = await page.$eval('#history-tip', t => (t.hidden ? '' : t.textContent));
      check(/mean /.test(tip) && /runs?\n/.test(tip), 'history: hovering a point shows ' + JSON.stringify(tip));
    }
    const rows = await page.$$eval('#history-commits tbody tr', rs => rs.length);
    check(rows > 0, 'history: no commits listed');
    check(page.problems.length === 0, 'errors: ' + page.problems.join(' | '));
  } finally {
    await browser.close();
  }
}

const [mode, ...args] = process.argv.slice(2);
const modes = { main, hostile, heap, watches, timeline, timing, 'source-timing': sourceTiming, 'functions-all': functionsAll, diff, history, complexity };
if (!modes[mode]) {
  console.error('usage: report_test.js main|hostile|heap|watches|timeline|timing|source-timing|functions-all|diff|history|complexity REPORT ...');
  process.exit(2);
}
modes[mode](...args).then(() => {
  for (const f of failures) console.error('FAIL: ' + f);
  process.exit(failures.length ? 1 : 0);
}, err => {
  console.error('FAIL: ' + (err && err.stack || err));
  process.exit(1);
});

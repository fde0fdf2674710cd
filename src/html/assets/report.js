// hotline's HTML report: lays out, sorts, filters and zooms the numbers hotline computed
// (data/*.js, each assigning to window.HOTLINE). Every text from the profile or the sources is
// put into the page as text (textContent, attributes), never parsed as markup. One script for the
// three pages hotline writes: a profile's report, a differential flame graph (data.diff) and a
// run database's history (data.history).
'use strict';
(function () {
  const H = window.HOTLINE || {};
  const D = H.data;
  const main = document.getElementById('main');
  if (!D) {
    main.textContent = 'data/data.js is missing: the report is incomplete.';
    return;
  }
  const kind = D.history ? 'history' : D.diff ? 'diff' : 'profile';
  const F = D.functions || { name: [], short: [], pseudo: [] };
  const total = D.total_ns || 0;

  // ---- small helpers ----
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function fmtTime(ns) {
    if (ns < 1000) return ns + 'ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(2) + 'us';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + 'ms';
    return (ns / 1e9).toFixed(2) + 's';
  }
  function share(ns) { return total ? 100 * ns / total : 0; }
  function fmtPct(p) { return p.toFixed(2); }
  function fmtBytes(b) {
    if (b < 1024) return b + ' B';
    if (b < 1024 * 1024) return (b / 1024).toFixed(1) + ' KiB';
    if (b < 1024 * 1024 * 1024) return (b / 1048576).toFixed(1) + ' MiB';
    return (b / 1073741824).toFixed(2) + ' GiB';
  }
  function fmtCount(n, exact) { return exact ? String(n) : '~' + n; }
  function heat(p) { return p >= 10 ? 'hot' : p >= 2 ? 'warm' : p > 0 ? 'some' : ''; }
  function fileName(index) { return index >= 0 ? D.files[index].path : ''; }
  // Files are numbered from 1 in links, as `hotline report` numbers them.
  function sourceLink(file, line) {
    return '#source/' + (file + 1) + (line ? '/' + line : '');
  }
  function functionLink(i) { return '#function/' + i; }
  // A windowed table's rows [first, last) of `count`, each `height` high, between two spacers
  // that stand for the others (the functions table, the sources).
  function drawRows(body, above, below, count, height, first, last, rowAt) {
    above.style.height = (first * height) + 'px';
    below.style.height = ((count - last) * height) + 'px';
    const rows = [];
    for (let k = first; k < last; ++k) rows.push(rowAt(k));
    body.replaceChildren(above, ...rows, below);
  }
  // A function's name, linked to its entry in the functions table; the whole name on hover.
  function functionAnchor(i) {
    return el('a', { href: functionLink(i), title: F.name[i], class: 'fname' }, F.short[i]);
  }
  function definition(i) {
    const file = F.file[i];
    if (file < 0 || !D.files[file]) return '';
    const path = fileName(file);
    const text = path.split('/').pop() + (F.line[i] ? ':' + F.line[i] : '');
    return D.files[file].source ? el('a', { href: sourceLink(file, F.line[i]), title: path }, text)
      : el('span', { title: path + ' (source not found)' }, text);
  }

  // Data files are scripts (file:// refuses fetching JSON): each is loaded once, when first shown.
  const loading = {};
  function load(key) {
    if (H[key] !== undefined) return Promise.resolve(H[key]);
    if (!loading[key]) {
      loading[key] = new Promise((resolve, reject) => {
        const s = document.createElement('script');
        s.src = 'data/' + key + '.js';
        s.onload = () => (H[key] !== undefined ? resolve(H[key]) : reject(new Error(key)));
        s.onerror = () => reject(new Error('cannot load data/' + key + '.js'));
        document.head.appendChild(s);
      });
    }
    return loading[key];
  }

  // ---- navigation ----
  const pages = [];
  if (kind === 'history') {
    pages.push(['history', 'History']);
  } else if (kind === 'diff') {
    pages.push(['diff', 'Differential flame graph'], ['changes', 'Changes']);
  } else {
    pages.push(['overview', 'Overview'], ['flame', 'Flame graph'], ['functions', 'Functions'], ['sources', 'Sources']);
    if (D.heap) pages.push(['heap', 'Heap']);
    if (D.watches) pages.push(['watches', 'Watched variables']);
    if (D.timeline) pages.push(['timeline', 'Timeline']);
    if (D.complexity) pages.push(['complexity', 'Complexity']);
    pages.push(['tables/T', 'Tables']);
  }
  const nav = document.getElementById('nav');
  for (const [route, title] of pages) nav.appendChild(el('a', { href: '#' + route, 'data-route': route }, title));

  function setReady() { document.body.setAttribute('data-ready', String(Date.now())); }
  function show(...nodes) {
    main.replaceChildren(...nodes.filter(n => n !== null && n !== undefined && n !== false));
  }
  function failed(err) { show(el('p', { class: 'warn' }, String(err && err.message || err))); setReady(); }

  function route() {
    const hash = location.hash.replace(/^#/, '') || pages[0][0];
    const parts = hash.split('/');
    for (const a of nav.children) a.classList.toggle('current', hash.startsWith(a.getAttribute('data-route').split('/')[0]));
    document.body.removeAttribute('data-ready');
    try {
      if (kind === 'history') return historyPage();
      if (kind === 'diff') return parts[0] === 'changes' ? changesPage() : diffPage();
      switch (parts[0]) {
        case 'flame': return flamePage();
        case 'functions': return functionsPage(-1);
        case 'function': return functionsPage(Number(parts[1]));
        case 'sources': return sourcesPage();
        case 'source': return sourcePage(Number(parts[1]) - 1, Number(parts[2] || 0));
        case 'heap': return heapPage();
        case 'watches': return watchesPage();
        case 'timeline': return timelinePage();
        case 'tables': return tablesPage(parts[1] || 'T');
        case 'complexity': return complexityPage(parts[1] === undefined ? -1 : Number(parts[1]));
        default: return overviewPage();
      }
    } catch (err) { failed(err); }
  }
  window.addEventListener('hashchange', route);

  // ---- overview ----
  function keyValues(rows) {
    const dl = el('dl', { class: 'facts' });
    for (const [k, v] of rows) if (v !== '' && v !== undefined) dl.append(el('dt', {}, k), el('dd', {}, v));
    return dl;
  }
  function overviewPage() {
    document.title = 'hotline: ' + (D.program || D.profile);
    const facts = keyValues([
      ['program', D.program], ['arguments', (D.argv || []).join(' ')], ['profile', D.profile],
      ['duration', D.duration_ns ? fmtTime(D.duration_ns) : ''],
      ['total time', fmtTime(total) + ' (' + D.clock + ' time)'], ['samples', String(D.samples)],
      ['threads', String(D.threads.length)], ['sampler', D.sampler], ['ended', D.ended]]);
    const warnings = el('ul', { class: 'warnings' });
    for (const w of D.warnings) warnings.appendChild(el('li', { class: 'warn' }, w));
    const threads = table(['tid', 'name', 'time', '%', 'samples'], D.threads.map(t =>
      [String(t.tid), t.name, fmtTime(t.time_ns), fmtPct(share(t.time_ns)), String(t.samples)]));
    const order = F.self.map((_, i) => i).filter(i => F.self[i] > 0).sort((a, b) => F.self[b] - F.self[a]).slice(0, 10);
    const top = table(['self', '%', 'inclusive', 'function'], order.map(i =>
      [fmtTime(F.self[i]), fmtPct(share(F.self[i])), fmtTime(F.inclusive[i]), functionAnchor(i)]));
    show(el('h1', {}, D.program || 'profile'), facts,
      D.warnings.length ? el('h2', {}, 'Warnings') : null, D.warnings.length ? warnings : null,
      el('h2', {}, 'Threads'), threads, el('h2', {}, 'Hottest functions (self time)'), top,
      el('h2', {}, 'Summary'), el('pre', { class: 'summary' }, D.summary_text));
    setReady();
  }
  // A table of rows of strings or nodes; numbers, times and sizes align right.
  function table(headers, rows) {
    const t = el('table', { class: 'grid' });
    const tr = el('tr');
    headers.forEach(h => tr.appendChild(el('th', {}, h)));
    t.appendChild(el('thead', {}, tr));
    const body = el('tbody');
    for (const row of rows) {
      const r = el('tr');
      row.forEach(c => r.appendChild(el('td', { class: typeof c === 'string' && /^([~\d.]|[+-]\d|>\+)/.test(c) ? 'num' : '' }, c)));
      body.appendChild(r);
    }
    t.appendChild(body);
    return t;
  }

  // ---- flame graph / icicle ----
  // In a differential report the graph is NEW's or BASE's shape (side), coloured by the change.
  const flame = { thread: 'all', order: 'callers', icicle: false, focus: 0, search: '', tree: null, side: 'new' };
  function prepareTree(t) {
    if (t.children) return t;
    t.children = t.f.map(() => []);
    for (let i = 1; i < t.f.length; ++i) t.children[t.p[i]].push(i);
    for (const c of t.children) c.sort((a, b) => t.v[b] - t.v[a]);
    return t;
  }
  // The flame graph page; `header` (nodes) goes above the controls, `first` (a control) before
  // the others, `after` below the graph.
  function flamePage(header, first, after) {
    let threadSelect = null;
    if (kind === 'profile') {
      threadSelect = el('select', { id: 'flame-thread', onchange: e => { flame.thread = e.target.value; flame.focus = 0; drawFlame(); } });
      for (const which of D.flames) {
        const t = which === 'all' ? null : D.threads[Number(which.slice(1))];
        threadSelect.appendChild(el('option', { value: which, selected: which === flame.thread ? 'selected' : null },
          t ? 'thread ' + t.tid + (t.name ? ' (' + t.name + ')' : '') : 'all threads'));
      }
    }
    const orderButton = el('button', { id: 'flame-order', onclick: () => { flame.order = flame.order === 'callers' ? 'callees' : 'callers'; flame.focus = 0; drawFlame(); } });
    const shapeButton = el('button', { id: 'flame-shape', onclick: () => { flame.icicle = !flame.icicle; drawFlame(); } });
    const search = el('input', { id: 'flame-search', type: 'search', placeholder: 'search functions', value: flame.search,
      oninput: e => { flame.search = e.target.value; drawFlame(); } });
    const reset = el('button', { onclick: () => { flame.focus = 0; drawFlame(); } }, 'reset zoom');
    show(...(header || []), el('div', { class: 'controls' }, first, threadSelect, orderButton, shapeButton, search, reset, el('span', { id: 'flame-match' })),
      el('div', { id: 'flame-info', class: 'info' }, 'Click a frame to zoom in, click it again to zoom out.'),
      el('div', { id: 'flame', class: 'flame' }), ...(after || []));
    drawFlame();
  }
  function drawFlame() {
    document.body.removeAttribute('data-ready');
    const key = kind === 'diff' ? 'diff-' + flame.side + '-' + flame.order : 'flame-' + flame.thread + '-' + flame.order;
    document.getElementById('flame-order').textContent = flame.order === 'callers' ? 'callers first' : 'callees first (inverted)';
    document.getElementById('flame-shape').textContent = flame.icicle ? 'icicle' : 'flame graph';
    load(key).then(t => layoutFlame(prepareTree(t))).catch(failed);
  }
  function searchMatcher() {
    const s = flame.search.trim();
    if (!s) return null;
    try {
      const re = new RegExp(s, 'i');
      return i => re.test(F.name[i]);
    } catch (e) {
      const lower = s.toLowerCase();
      return i => F.name[i].toLowerCase().includes(lower);
    }
  }
  function nameHue(name) {
    let h = 0;
    for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function layoutFlame(t) {
    const box = document.getElementById('flame');
    if (!box) return;
    const width = box.clientWidth || 1000;
    const rowHeight = 18;
    const match = searchMatcher();
    const focus = flame.focus < t.f.length ? flame.focus : 0;
    // Ancestors of the focus span the whole width, as the path that led there.
    const path = [];
    for (let n = focus; n !== 0; n = t.p[n]) path.unshift(n);
    const nodes = [];
    let depthMax = path.length;
    path.forEach((n, d) => nodes.push([n, d + 1, 0, width]));
    const scale = t.v[focus] ? width / t.v[focus] : 0;
    const stack = [[focus, path.length, 0]];
    while (stack.length) {
      const [n, depth, x] = stack.pop();
      if (n !== focus) nodes.push([n, depth, x, t.v[n] * scale]);
      depthMax = Math.max(depthMax, depth);
      let cx = x;
      for (const c of t.children[n]) {
        const w = t.v[c] * scale;
        if (w >= 1) stack.push([c, depth + 1, cx]);
        cx += w;
      }
    }
    const height = (depthMax + 1) * rowHeight;
    box.style.height = height + 'px';
    const frag = document.createDocumentFragment();
    let matched = 0;
    const matchedNodes = new Set();
    for (const [n, depth, x, w] of nodes) {
      const f = t.f[n];
      const name = f < 0 ? (kind === 'diff' ? 'all' : flame.thread === 'all' ? 'all threads' : 'thread') : F.short[f];
      const y = flame.icicle ? depth * rowHeight : height - (depth + 1) * rowHeight;
      const hit = f >= 0 && match && match(f);
      if (hit) {
        matchedNodes.add(n);
        let a = t.p[n], counted = false;
        for (; a !== 0; a = t.p[a]) if (matchedNodes.has(a)) { counted = true; break; }
        if (!counted && nodes.length) matched += t.v[n];
      }
      const div = el('div', {
        class: 'frame' + (hit ? ' match' : '') + (n === focus ? ' focus' : '') + (f >= 0 && F.pseudo[f] ? ' pseudo' : ''),
        title: frameText(t, n, name),
        'data-node': String(n), 'data-function': f >= 0 ? String(f) : null,
        'data-state': kind === 'diff' ? diffState(t, n) : null,
      }, w > 30 ? name : '');
      div.style.left = x + 'px';
      div.style.width = Math.max(w - 1, 1) + 'px';
      div.style.top = y + 'px';
      if (!hit && kind === 'diff') div.style.backgroundColor = diffColour(t, n);
      else if (!hit && f >= 0 && !F.pseudo[f]) div.style.backgroundColor = 'hsl(' + (10 + nameHue(F.name[f]) % 40) + ',80%,' + (58 + nameHue(F.name[f]) % 12) + '%)';
      frag.appendChild(div);
    }
    box.replaceChildren(frag);
    box.onclick = e => {
      const n = Number(e.target.getAttribute('data-node'));
      if (Number.isNaN(n) || e.target.getAttribute('data-node') === null) return;
      flame.focus = n === flame.focus ? t.p[n] : n;
      showFrameInfo(t, n);
      layoutFlame(t);
    };
    document.getElementById('flame-match').textContent = match ? 'matched: ' + fmtPct(100 * matched / (t.total || 1)) + '% of this graph' : '';
    if (kind === 'diff') showMissing(t);
    setReady();
  }
  // A frame's hover text: its whole name and its times.
  function frameText(t, n, name) {
    const f = t.f[n];
    const whole = f >= 0 ? F.name[f] : name;
    if (kind === 'diff') return whole + '\n' + diffText(t, n);
    return whole + '\n' + fmtTime(t.v[n]) + ' (' + fmtPct(100 * t.v[n] / (t.total || 1)) + '%), self ' + fmtTime(t.s[n]);
  }
  function showFrameInfo(t, n) {
    const info = document.getElementById('flame-info');
    const f = t.f[n];
    if (kind === 'diff') { info.replaceChildren(el('b', { title: f >= 0 ? F.name[f] : '' }, f >= 0 ? F.short[f] : 'all'), ': ' + diffText(t, n).replace(/\n/g, '; ')); return; }
    if (f < 0) { info.replaceChildren('all samples: ' + fmtTime(t.v[n])); return; }
    const parts = [functionAnchor(f), ': ' + fmtTime(t.v[n]) + ' here (' + fmtPct(100 * t.v[n] / (t.total || 1)) + '%), self ' + fmtTime(t.s[n]) + '; '];
    const hf = F.hot_file[f];
    if (hf >= 0 && D.files[hf] && D.files[hf].source) parts.push(el('a', { href: sourceLink(hf, F.hot_line[f]), class: 'hotline-link' }, 'hottest line ' + fileName(hf).split('/').pop() + ':' + F.hot_line[f]));
    info.replaceChildren(...parts);
  }

  // ---- functions table, with callers and callees ----
  const columns = [
    ['self', i => F.self[i], i => fmtTime(F.self[i])],
    ['self %', i => F.self[i], i => fmtPct(share(F.self[i]))],
    ['inclusive', i => F.inclusive[i], i => fmtTime(F.inclusive[i])],
    ['incl %', i => F.inclusive[i], i => fmtPct(share(F.inclusive[i]))],
    ['calls', i => F.calls[i], i => fmtCount(F.calls[i], F.exact[i])],
    // Where it is defined before its name, which is last as in `hotline report`'s tables: a long
    // C++ name then never pushes the other columns out of view.
    ['defined', i => fileName(F.file[i]) + ':' + String(F.line[i]).padStart(8, '0'), i => definition(i)],
    ['function', i => F.short[i].toLowerCase(), i => functionAnchor(i)],
  ];
  const listing = { sort: 0, descending: true, filter: '' };
  let callers = null;
  function callersOf(i) {
    if (!callers) {
      callers = H.callees.map(() => []);
      H.callees.forEach((edges, parent) => edges.forEach(([child, time, loop, calls]) => callers[child].push([parent, time, loop, calls])));
    }
    return callers[i];
  }
  function functionsPage(selected) {
    const filter = el('input', { id: 'function-filter', type: 'search', placeholder: 'filter by name', value: listing.filter,
      oninput: e => { listing.filter = e.target.value; fill(); } });
    const head = el('tr');
    columns.forEach(([title], c) => head.appendChild(el('th', { class: 'sortable' + (c === listing.sort ? (listing.descending ? ' down' : ' up') : ''),
      onclick: () => { if (listing.sort === c) listing.descending = !listing.descending; else { listing.sort = c; listing.descending = c < 5; } functionsPage(selected); } }, title)));
    const body = el('tbody');
    const note = el('p', { class: 'note' });
    const detail = el('div', { id: 'function-detail' });
    const box = el('div', { class: 'scroll' });
    // Every function, a window at a time (as the sources): the rows in the box's view and a
    // screenful either side exist, the rest are two spacers redrawn as the box scrolls.
    let rows = [], drawn = [-1, -1], height = 0;
    const above = el('tr', { class: 'spacer' }), below = el('tr', { class: 'spacer' });
    function rowOf(i) {
      const tr = el('tr', { class: i === selected ? 'selected' : '', 'data-function': String(i) });
      columns.forEach(([, , cell], c) => tr.appendChild(el('td', { class: c < 5 ? 'num' : '' }, cell(i))));
      return tr;
    }
    function draw() {
      if (!rows.length) { body.replaceChildren(); return; }
      if (!height) {
        body.replaceChildren(rowOf(rows[0]));
        height = Math.max(1, body.firstChild.getBoundingClientRect().height);
      }
      const spare = Math.ceil(box.clientHeight / height) + 40;
      const first = Math.max(0, Math.floor(box.scrollTop / height) - spare);
      const last = Math.min(rows.length, Math.ceil((box.scrollTop + box.clientHeight) / height) + spare);
      if (first === drawn[0] && last === drawn[1]) return;
      drawn = [first, last];
      drawRows(body, above, below, rows.length, height, first, last, k => rowOf(rows[k]));
    }
    function fill() {
      const needle = listing.filter.toLowerCase();
      const key = columns[listing.sort][1];
      rows = F.name.map((_, i) => i).filter(i => (F.inclusive[i] > 0 || F.calls[i] > 0) &&
        (!needle || F.name[i].toLowerCase().includes(needle)));
      rows.sort((a, b) => { const x = key(a), y = key(b); const c = x < y ? -1 : x > y ? 1 : 0; return listing.descending ? -c : c; });
      drawn = [-1, -1];
      box.scrollTop = 0;
      draw();
      note.textContent = rows.length + ' functions';
    }
    box.addEventListener('scroll', draw, { passive: true });
    box.appendChild(el('table', { class: 'grid functions' }, el('thead', {}, head), body));
    show(el('div', { class: 'controls' }, filter, note), el('div', { class: 'split' }, box, detail));
    fill();
    if (selected >= 0 && selected < F.name.length) {
      load('callees').then(() => { showFunction(selected, detail); setReady(); }).catch(failed);
    } else {
      setReady();
    }
  }
  // The function's -G section: its callers above, itself and its self time, its callees below.
  function showFunction(i, box) {
    const section = F.inclusive[i] || 1;
    const ofSection = ns => fmtPct(100 * ns / section);
    const rows = [];
    for (const [parent, time, loop, calls] of callersOf(i).slice().sort((a, b) => b[1] - a[1]))
      rows.push(['caller', fmtTime(time), loop ? fmtTime(loop) : '', ofSection(time), fmtCount(calls, F.exact[parent] && F.exact[i]) + '/' + F.calls[i], functionAnchor(parent)]);
    rows.push(['function', fmtTime(F.inclusive[i]), '', fmtPct(share(F.inclusive[i])), fmtCount(F.calls[i], F.exact[i]), el('b', {}, F.short[i])]);
    rows.push(['self', fmtTime(F.self[i]), '', ofSection(F.self[i]), '', '(self)']);
    for (const [child, time, loop, calls] of H.callees[i])
      rows.push(['callee', fmtTime(time), loop ? fmtTime(loop) : '', ofSection(time), fmtCount(calls, F.exact[child] && F.exact[i]) + '/' + F.calls[child], functionAnchor(child)]);
    const t = table(['', 'time', 'loop', '%', 'calls', 'name'], rows);
    const hf = F.hot_file[i];
    const links = [];
    if (hf >= 0 && D.files[hf] && D.files[hf].source)
      links.push(el('a', { href: sourceLink(hf, F.hot_line[i]), class: 'hotline-link' }, 'source at its hottest line, ' + fileName(hf).split('/').pop() + ':' + F.hot_line[i]));
    else if (F.file[i] >= 0) links.push(el('span', { class: 'note' }, 'source not found: ' + fileName(F.file[i])));
    const sandwichBox = el('div', { class: 'sandwich' });
    box.replaceChildren(el('h2', { title: F.name[i] }, F.short[i]), el('p', { class: 'fullname' }, F.name[i]), ...links, t,
      el('p', { class: 'note' }, 'time: in the callee not spent in a recursion back into the caller; loop: time the recursion brought back.'),
      sandwichBox);
    load('flame-all-callers').then(tree => sandwichBox.replaceChildren(...sandwich(i, tree))).catch(() => {});
  }
  // The sandwich (speedscope's): the function's whole caller chains above it and its callee
  // trees below, each merged over all its stacks, from the callers-first flame tree. An
  // activation inside another of the same function (recursion) is counted with the outer one.
  const childrenOf = new WeakMap();  // by flame tree: each node's children, made once
  function sandwich(i, tree) {
    const n = tree.f.length;
    if (!childrenOf.has(tree)) {
      const lists = Array.from({ length: n }, () => []);
      for (let k = 1; k < n; ++k) lists[tree.p[k]].push(k);
      childrenOf.set(tree, lists);
    }
    const children = childrenOf.get(tree);
    const outermost = [];
    for (let k = 1; k < n; ++k) {
      if (tree.f[k] !== i) continue;
      let a = tree.p[k];
      while (a > 0 && tree.f[a] !== i) a = tree.p[a];
      if (a === 0) outermost.push(k);
    }
    const whole = outermost.reduce((sum, k) => sum + tree.v[k], 0) || 1;
    // A merged tree: by function along each path, the time of the stacks through it.
    const node = () => ({ ns: 0, kids: new Map() });
    const callers = node(), callees = node();
    for (const k of outermost) {
      let m = callers;
      for (let a = tree.p[k]; a > 0; a = tree.p[a]) {
        if (!m.kids.has(tree.f[a])) m.kids.set(tree.f[a], node());
        m = m.kids.get(tree.f[a]);
        m.ns += tree.v[k];
      }
      const add = (from, into) => {
        for (const c of children[from]) {
          if (!into.kids.has(tree.f[c])) into.kids.set(tree.f[c], node());
          const m2 = into.kids.get(tree.f[c]);
          m2.ns += tree.v[c];
          add(c, m2);
        }
      };
      add(k, callees);
    }
    // Rows of the merged tree, the largest first, down to 1% of the function's time.
    function rows(m, depth, out) {
      const kids = [...m.kids.entries()].sort((a, b) => b[1].ns - a[1].ns);
      for (const [fn, kid] of kids) {
        if (100 * kid.ns < whole || out.length >= 60) break;
        const name = el('td', {}, fn >= 0 ? functionAnchor(fn) : '(root)');
        name.style.paddingLeft = (0.5 + depth) + 'em';  // the page's policy allows no style attribute
        out.push(el('tr', {}, el('td', { class: 'num' }, fmtTime(kid.ns)), el('td', { class: 'num' }, fmtPct(100 * kid.ns / whole)), name));
        if (depth < 12) rows(kid, depth + 1, out);
      }
      return out;
    }
    const part = (title, id, m) => {
      const body = rows(m, 0, []);
      return [el('h3', {}, title), body.length ? el('table', { class: 'grid', id }, el('tbody', {}, ...body))
        : el('p', { class: 'note' }, 'none')];
    };
    return [...part('Called through (callers, innermost first)', 'sandwich-callers', callers),
      ...part('Calls into (callees)', 'sandwich-callees', callees),
      el('p', { class: 'note' }, 'Every stack through ' + F.short[i] + ', merged: its time in each chain of callers and each tree of callees, as % of its ' + fmtTime(whole) + '.')];
  }

  // ---- sources ----
  function sourcesPage() {
    const rows = [], missing = [];
    D.files.forEach((f, i) => {
      if (!f.data) return;
      if (!f.source) { missing.push(el('li', {}, f.path)); return; }
      rows.push([fmtTime(f.time_ns), fmtPct(share(f.time_ns)), String(f.count), String(f.lines_hit), el('a', { href: sourceLink(i, 0) }, f.path)]);
    });
    rows.sort((a, b) => parseFloat(b[1]) - parseFloat(a[1]));
    show(el('h1', {}, 'Source files with data'), table(['time', '%', 'count', 'lines hit', 'file'], rows),
      el('h2', {}, 'Sources missing on disk'), missing.length ? el('ul', { id: 'missing-sources' }, ...missing) : el('p', {}, 'none'));
    setReady();
  }
  function sourcePage(file, target) {
    const f = D.files[file];
    if (!f) return failed('no such file');
    if (!f.source) { show(el('p', { class: 'warn' }, 'The source of ' + f.path + ' was not found on disk.')); return setReady(); }
    show(el('p', {}, 'loading ' + f.path + '…'));
    load('source-' + file).then(src => renderSource(file, src, target)).catch(failed);
  }
  // A source is drawn a window at a time: only the rows on screen (and a screenful either side)
  // exist, the rest is two spacers, so a file of 250,000 lines opens as fast as one of 50. Every
  // row has the same height (code never wraps); the items are the lines and, before a function's
  // first line, a row naming it.
  let sourceScroll = null;  // the window's scroll listener of the source shown, if any
  function renderSource(file, src, target) {
    const byLine = new Map(src.lines.map(l => [l[0], l]));
    const defs = new Map();
    F.file.forEach((fl, i) => { if (fl === file && F.line[i] > 0 && !F.pseudo[i]) { if (!defs.has(F.line[i])) defs.set(F.line[i], []); defs.get(F.line[i]).push(i); } });
    // The callees of each calling line, the most time first (at most five a line).
    const callsOf = new Map();
    for (const [n, callee, ns] of src.calls || []) {
      if (!callsOf.has(n)) callsOf.set(n, []);
      if (callsOf.get(n).length < 5) callsOf.get(n).push([callee, ns]);
    }
    // [line]; [line, function]: a function's head row before its line; [line, -1, callee, ns]:
    // a row under a calling line for the time it gave a callee.
    const items = [];
    let targetItem = -1;
    src.text.forEach((_, k) => {
      const n = k + 1;
      for (const i of defs.get(n) || []) items.push([n, i]);
      if (n === target) targetItem = items.length;
      items.push([n]);
      for (const [callee, ns] of callsOf.get(n) || []) items.push([n, -1, callee, ns]);
    });
    function row([n, fn, callee, ns]) {
      if (fn === -1)
        return el('tr', { class: 'callrow' }, el('td', { colspan: '6' }),
          el('td', {}, '→ ', functionAnchor(callee), ' ' + fmtTime(ns) + ' (' + fmtPct(share(ns)) + '%)'));
      if (fn !== undefined)
        return el('tr', { class: 'fnhead' }, el('td', { colspan: '6' }), el('td', {}, '— ', functionAnchor(fn),
          ': explicit ' + fmtTime(F.self[fn]) + ' (' + fmtPct(share(F.self[fn])) + '%), implicit ' + fmtTime(F.inclusive[fn]) + ' (' + fmtPct(share(F.inclusive[fn])) + '%), calls ' + fmtCount(F.calls[fn], F.exact[fn])));
      const l = byLine.get(n);
      let cells = ['', '', '', '', ''], cls = '';
      if (l) {
        const [, count, exact, time, inclusive] = l;
        const p = share(time);
        const never = exact && count === 0;
        cells = [never ? '#####' : fmtCount(count, exact), time ? fmtTime(time) : '', time && count ? fmtTime(Math.floor(time / count)) : '', time ? fmtPct(p) : '',
          inclusive > time ? fmtTime(inclusive) : ''];
        cls = never ? 'never' : heat(p);
      }
      return el('tr', { id: 'L' + n, class: cls + (n === target ? ' target' : '') },
        el('td', { class: 'lineno' }, el('a', { href: sourceLink(file, n) }, String(n))),
        ...cells.map(c => el('td', { class: 'num' }, c)),
        el('td', src.text[n - 1].length > 80 ? { class: 'code', title: src.text[n - 1] } : { class: 'code' }, src.text[n - 1]));
    }
    // Reachable at once: the hottest lines and the functions defined here.
    const hot = src.lines.filter(l => l[3] > 0).sort((a, b) => b[3] - a[3]).slice(0, 10)
      .map(l => el('a', { href: sourceLink(file, l[0]) }, String(l[0]) + ' (' + fmtPct(share(l[3])) + '%)'));
    const named = new Set();  // one link per name and line (a hook defined there many times)
    const fns = [...defs.values()].flat().sort((a, b) => F.inclusive[b] - F.inclusive[a])
      .filter(i => !named.has(F.short[i] + ':' + F.line[i]) && named.add(F.short[i] + ':' + F.line[i])).slice(0, 30)
      .map(i => el('a', { href: sourceLink(file, F.line[i]), title: F.name[i], class: 'fname' }, F.short[i]));
    const index = el('div', { class: 'source-index' },
      hot.length ? el('p', {}, 'hottest lines: ', ...hot.flatMap((a, k) => k ? [', ', a] : [a])) : null,
      fns.length ? el('p', {}, 'functions: ', ...fns.flatMap((a, k) => k ? [', ', a] : [a])) : null);
    const head = el('tr', {}, ...['line', 'count', 'time', 'average', '%', 'with callees', 'source'].map(h => el('th', { class: h === 'source' ? 'code' : 'num' }, h)));
    const above = el('tr', { class: 'spacer' }), below = el('tr', { class: 'spacer' });
    const body = el('tbody');
    const tableEl = el('table', { class: 'source', 'data-lines': String(src.text.length) }, el('thead', {}, head), body);
    show(el('h1', { title: src.found }, src.path), index, tableEl);
    // The rows' height, from one drawn.
    body.replaceChildren(...(items.length ? [row(items[0])] : []));  // an empty file has none
    const height = Math.max(1, body.firstChild ? body.firstChild.getBoundingClientRect().height : 18);
    const spare = Math.ceil(window.innerHeight / height) + 50;  // rows drawn beyond the screen
    let drawn = [-1, -1];
    function draw() {
      const top = body.getBoundingClientRect().top;  // of the first item
      const first = Math.max(0, Math.floor(-top / height) - spare);
      const last = Math.min(items.length, Math.ceil((window.innerHeight - top) / height) + spare);
      if (first === drawn[0] && last === drawn[1]) return;
      drawn = [first, last];
      drawRows(body, above, below, items.length, height, first, last, k => row(items[k]));
    }
    if (sourceScroll) window.removeEventListener('scroll', sourceScroll);
    sourceScroll = () => { if (document.body.contains(tableEl)) draw(); else { window.removeEventListener('scroll', sourceScroll); sourceScroll = null; } };
    window.addEventListener('scroll', sourceScroll, { passive: true });
    draw();
    if (targetItem >= 0) {
      // The target's place is known without drawing it: scroll there, then draw what shows.
      const y = body.getBoundingClientRect().top + window.scrollY + targetItem * height - window.innerHeight / 2;
      window.scrollTo(0, Math.max(0, y));
      draw();
    }
    setReady();
  }

  // ---- timeline (timed traces) ----
  // Each thread's calls on a time axis, nested by depth; a click on a call zooms to it, a click on
  // the empty background zooms back out.
  function timelinePage() {
    const sections = D.timeline.map(t => {
      const box = el('div', { class: 'timeline', 'data-thread': String(t.tid) });
      const cut = t.shown < t.calls ? ' (' + t.shown + ' of ' + t.calls + ' calls drawn: the rest are too short to see)' : '';
      return [el('h2', {}, (t.name ? t.name + ' ' : '') + 'thread ' + t.tid + ': ' + fmtTime(t.span_ns) + ', ' + t.calls + ' calls' + cut), box, t];
    });
    show(el('h1', {}, 'Timeline of the traced calls'), ...sections.flatMap(([h, box]) => [h, box]));
    Promise.all(sections.map(([, box, t]) => load(t.data).then(calls => drawTimeline(box, calls, 0, t.span_ns))))
      .then(setReady, failed);
  }
  function drawTimeline(box, calls, from, to) {
    const width = box.clientWidth || 1000, rowHeight = 18, span = Math.max(to - from, 1);
    let deepest = 0;
    const frag = document.createDocumentFragment();
    for (const [f, start, duration, depth] of calls) {
      if (start + duration < from || start > to) continue;
      const x = Math.max((start - from) / span * width, 0);
      const w = Math.min((start + duration - from) / span * width, width) - x;
      if (w < 0.5) continue;
      deepest = Math.max(deepest, depth);
      const div = el('div', { class: 'frame call', title: F.name[f] + '\n' + fmtTime(duration), 'data-function': String(f),
        'data-start': String(start), 'data-duration': String(duration) }, w > 30 ? F.short[f] : '');
      div.style.left = x + 'px';
      div.style.width = Math.max(w - 1, 1) + 'px';
      div.style.top = depth * rowHeight + 'px';
      div.style.backgroundColor = 'hsl(' + (10 + nameHue(F.name[f]) % 40) + ',80%,' + (58 + nameHue(F.name[f]) % 12) + '%)';
      frag.appendChild(div);
    }
    box.style.height = (deepest + 1) * rowHeight + 'px';
    box.replaceChildren(frag);
    box.onclick = e => {
      const start = e.target.getAttribute('data-start');
      if (start === null) return drawTimeline(box, calls, 0, calls.reduce((m, c) => Math.max(m, c[1] + c[2]), 1));
      drawTimeline(box, calls, Number(start), Number(start) + Number(e.target.getAttribute('data-duration')));
    };
  }

  // ---- heap ----
  function heapPage() {
    const h = D.heap;
    const facts = keyValues([['peak', fmtBytes(h.peak_bytes) + ' at ' + fmtTime(h.peak_time_ns)], ['allocated', fmtBytes(h.total_bytes) + ' in ' + h.alloc_calls + ' calls'],
      ['freed', h.free_calls + ' calls'], ['temporary', h.temporary_calls + ' calls'], ['leaked', fmtBytes(h.leaked_bytes) + ' in ' + h.leaked_calls + ' blocks'],
      ['mmap', h.mmap_calls + ' calls, ' + fmtBytes(h.mmap_bytes)]]);
    const sites = h.sites.slice().sort((a, b) => b.bytes - a.bytes).slice(0, 50).map(s => {
      const file = D.files.findIndex(f => f.path === s.file);
      const where = s.file ? s.file.split('/').pop() + ':' + s.line : '';
      const callers = el('div', { class: 'chains' }, ...s.chains.map(c => el('div', {}, fmtBytes(c.bytes) + ' ← ' + c.frames.join(' ← '))));
      return [fmtBytes(s.bytes), String(s.calls), fmtBytes(s.peak_bytes), String(s.temporary_calls), fmtBytes(s.leaked_bytes),
        s.via ? s.via + ' from ' + s.function : s.function,
        file >= 0 && D.files[file].source ? el('a', { href: sourceLink(file, s.line) }, where) : where, callers];
    });
    const leaks = h.leaks.slice(0, 50).map(l => el('div', { class: 'leak' }, el('p', {}, fmtBytes(l.bytes) + ' in ' + l.calls + ' blocks'), el('pre', {}, l.stack.join('\n'))));
    show(el('h1', {}, 'Heap'), facts, el('h2', {}, 'Live bytes over time'), heapChart(h),
      el('h2', {}, 'Top sites by bytes allocated'), table(['bytes', 'calls', 'at peak', 'temporary', 'leaked', 'site', 'where', 'called from'], sites),
      el('h2', {}, 'Leaks'), leaks.length ? el('div', {}, ...leaks) : el('p', {}, 'none'));
    setReady();
  }
  // SVG elements, and a value that steps at each point's time (it holds until the next one).
  const SVG = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function stepLine(points, xy, first) {
    let previous = first;
    return svgEl('polyline', { class: 'live', points: points.map(([t, y]) => { const s = xy(t, previous) + ' ' + xy(t, y); previous = y; return s; }).join(' ') });
  }
  // An axis from 0 to a round value above `highest`, in about four round steps. (10 × the
  // magnitude can fall short: highest = 3.9e6 has steps of 1e5 × 1 … 10, and 4 × 1e6 < 1.05 × 3.9e6.)
  function roundAxis(highest) {
    const magnitude = Math.pow(10, Math.floor(Math.log10(highest / 4)));
    const step = [1, 2, 2.5, 5, 10, 20].map(m => m * magnitude).find(d => 4 * d >= highest * 1.05);
    return { step, ceiling: step * Math.ceil(highest * 1.05 / step) };
  }
  function heapChart(h) {
    const w = 900, ht = 220;
    const svg = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + ht, class: 'chart' });
    const points = h.timeline;
    const tmax = points.length ? points[points.length - 1][0] || 1 : 1;
    const bmax = h.peak_bytes || 1;
    const xy = (t, b) => (40 + (w - 50) * t / tmax).toFixed(1) + ',' + (ht - 20 - (ht - 30) * b / bmax).toFixed(1);
    const [px, py] = xy(h.peak_time_ns, h.peak_bytes).split(',');
    svg.append(stepLine(points, xy, 0), svgEl('circle', { cx: px, cy: py, r: '4', class: 'peak' }),
      svgEl('text', { x: '42', y: '14' }, 'peak ' + fmtBytes(h.peak_bytes) + ' at ' + fmtTime(h.peak_time_ns) + '; run ' + fmtTime(tmax)));
    return svg;
  }

  // ---- watched variables ----
  // hotline counted the writes, read the values by the variable's type and symbolized the lines;
  // here they only become tables and one value-over-time chart per variable.
  function watchesPage() {
    const W = D.watches;
    const summary = W.variables.map(v => [v.name + (v.from_api ? ' (hotline_watch)' : ''), v.type, String(v.writes),
      v.reads_counted ? String(v.reads) : '-', String(v.lost), v.min, v.max, String(v.distinct)]);
    const parts = [el('h1', {}, 'Watched variables'),
      table(['variable', 'type', 'writes', 'reads', 'lost', 'min', 'max', 'distinct'], summary)];
    for (const note of W.notes) parts.push(el('p', { class: 'warn' }, note));
    for (const v of W.variables) {
      parts.push(el('h2', {}, v.name));
      if (v.timeline.length) parts.push(watchChart(v));
      parts.push(table(['writes', 'value'], v.values.map(([text, n]) => [String(n), text])));
      parts.push(table(['writes', 'function', 'where'], v.lines.map(l => {
        const file = D.files.findIndex(f => f.path === l.file);
        const where = l.file ? l.file.split('/').pop() + ':' + l.line : '';
        return [String(l.writes), l.function, file >= 0 && D.files[file].source ? el('a', { href: sourceLink(file, l.line) }, where) : where];
      })));
    }
    show(...parts);
    setReady();
  }
  function watchChart(v) {
    const w = 900, ht = 160;
    const svg = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + ht, class: 'chart' });
    const points = v.timeline;
    const t0 = points[0][0], t1 = points[points.length - 1][0];
    let lo = Infinity, hi = -Infinity;
    for (const [, y] of points) { if (y < lo) lo = y; if (y > hi) hi = y; }
    const span = hi > lo ? hi - lo : 1, tspan = t1 > t0 ? t1 - t0 : 1;
    const xy = (t, y) => (40 + (w - 50) * (t - t0) / tspan).toFixed(1) + ',' + (ht - 20 - (ht - 40) * (y - lo) / span).toFixed(1);
    svg.append(stepLine(points, xy, points[0][1]), svgEl('text', { x: '42', y: '14' }, 'values written, ' + v.min + ' to ' + v.max + ', over ' + fmtTime(tspan) +
      (points.length < v.writes ? ' (' + points.length + ' of ' + v.writes + ' writes drawn)' : '')));
    return svg;
  }

  // ---- texprofile's tables ----
  function tablesPage(flag) {
    const tabs = el('div', { class: 'controls' }, ...D.tables.map(t => el('a', { href: '#tables/' + t.flag, class: t.flag === flag ? 'tab current' : 'tab' }, t.title)));
    const entry = D.tables.find(t => t.flag === flag) || D.tables[0];
    show(tabs, el('p', {}, 'loading…'));
    load(entry.key).then(text => { show(tabs, el('pre', { class: 'table-text' }, ...linkedTable(text))); setReady(); }).catch(failed);
  }
  // The table's text as `hotline report` prints it, with each cell that names a function linked
  // to its entry and each that names a source file linked to its page. Cells are what two or
  // more spaces separate.
  let linkTargets = null;
  function linkedTable(text) {
    if (!linkTargets) {
      linkTargets = new Map();
      D.files.forEach((f, i) => { if (f.source) linkTargets.set(f.path, sourceLink(i, 0)); });
      F.name.forEach((name, i) => {
        if (F.pseudo[i]) return;
        for (const n of [name, F.short[i]]) if (!linkTargets.has(n)) linkTargets.set(n, functionLink(i));
      });
    }
    const lines = text.split('\n');
    if (lines.length > 50000) return [text];  // too many to link at once: the text as it is
    const out = [];
    let plain = '';
    for (const line of lines) {
      for (const part of line.split(/( {2,})/)) {
        const href = linkTargets.get(part.trim());
        if (!href || !part.trim()) { plain += part; continue; }
        if (plain) out.push(plain);
        plain = '';
        out.push(el('a', { href }, part));
      }
      plain += '\n';
    }
    if (plain) out.push(plain);
    return out;
  }

  // ---- differential flame graph (hotline html --diff) ----
  // hotline computed every frame's base and new time, its change new/base − 1 (c) and its state
  // (q): 0 within the sampling noise, 1 beyond it, 2 only in NEW, 3 only in BASE. Here they only
  // become colours and words.
  const G = D.diff;
  const states = ['noise', 'beyond', 'new', 'gone'];
  function fmtSigned(ns) { return (ns < 0 ? '-' : '+') + fmtTime(Math.abs(ns)); }
  function fmtChange(c) { return c > 9.99 ? '>+999%' : (c >= 0 ? '+' : '') + (100 * c).toFixed(1) + '%'; }
  function diffState(t, n) {
    const q = states[t.q[n]];
    return q === 'beyond' ? (t.c[n] > 0 ? 'slower' : 'faster') : q;
  }
  function diffText(t, n) {
    const q = t.q[n], times = 'base ' + fmtTime(t.b[n]) + ', new ' + fmtTime(t.n[n]);
    if (q === 2) return times + '\nnew: only in NEW (BASE has no such path)';
    const change = 'change ' + fmtSigned(t.n[n] - t.b[n]) + ' (' + fmtChange(t.c[n]) + ')';
    if (q === 3) return times + '\n' + change + ': gone, NEW has no such path';
    return times + '\n' + change + (q === 1 ? ', beyond the sampling noise' : ', within the sampling noise');
  }
  // Red for slower, blue for faster, more saturated the larger the change (full at ±50%); grey
  // within the noise; full red for new paths, full blue for vanished ones.
  function diffColour(t, n) {
    const q = t.q[n];
    if (q === 2) return 'hsl(0,85%,50%)';
    if (q === 3) return 'hsl(215,85%,50%)';
    if (q !== 1) return 'hsl(0,0%,86%)';
    const strength = Math.min(1, Math.abs(t.c[n]) / 0.5);
    return 'hsl(' + (t.c[n] > 0 ? 0 : 215) + ',' + Math.round(30 + 55 * strength) + '%,' + Math.round(80 - 30 * strength) + '%)';
  }
  function showMissing(t) {
    const box = document.getElementById('diff-missing');
    if (!box) return;
    const share = fmtPct(100 * t.missing_ns / (t.other_total || 1));
    box.textContent = flame.side === 'new'
      ? fmtTime(t.missing_ns) + ' of BASE\'s time (' + share + '% of it) is in paths NEW does not have: it has no place in this graph. Switch to base\'s shape to see those paths (blue).'
      : fmtTime(t.missing_ns) + ' of NEW\'s time (' + share + '% of it) is in paths BASE did not have: it has no place in this graph (red in new\'s shape).';
  }
  function diffSide(x) {
    return [x.path, fmtTime(x.total_ns) + ' ' + G.clock + ' time, ' + x.samples + ' samples' + (x.program ? ', ' + x.program : '')];
  }
  function diffPage() {
    document.title = 'hotline diff: ' + G.base.path + ' → ' + G.new.path;
    const facts = keyValues([['base', diffSide(G.base).join(': ')], ['new', diffSide(G.new).join(': ')],
      ['change', fmtSigned(G.new.total_ns - G.base.total_ns) + ' (' + fmtChange(G.change) + ')'],
      ['BASE time not in NEW', fmtTime(G.graphs.new.callers.missing_ns) + ' (' + fmtPct(100 * G.graphs.new.callers.missing_ns / (G.base.total_ns || 1)) + '% of BASE), in paths NEW does not have']]);
    const warnings = el('ul', { class: 'warnings' }, ...D.warnings.map(w => el('li', { class: 'warn' }, w)));
    const legend = el('p', { class: 'legend' },
      el('span', { class: 'swatch slower' }), 'slower ', el('span', { class: 'swatch faster' }), 'faster ',
      el('span', { class: 'swatch noise' }), 'within the sampling noise ', el('span', { class: 'swatch new' }), 'new path (only in NEW) ',
      el('span', { class: 'swatch gone' }), 'vanished path (only in BASE)');
    const rule = el('p', { class: 'note' }, 'Frames are as wide as their time in the shape shown and coloured by the change of that path\'s time, new/base − 1, ' +
      'once it is beyond what the sampling noise of the frame\'s sample counts allows (' + (100 * G.confidence) + '% for the graph as a whole); ' +
      'the more saturated, the larger the change.');
    const sideButton = el('button', { id: 'flame-side', onclick: () => { flame.side = flame.side === 'new' ? 'base' : 'new'; flame.focus = 0; sideButton.textContent = sideLabel(); drawFlame(); } }, sideLabel());
    flamePage([el('h1', {}, 'Differential flame graph'), facts, D.warnings.length ? warnings : null, legend, rule], sideButton,
      [el('p', { id: 'diff-missing', class: 'note' })]);
  }
  function sideLabel() { return flame.side === 'new' ? 'new\'s shape' : 'base\'s shape'; }
  const changeTables = [['self', 'Self time per function'], ['inclusive', 'Inclusive time per function'], ['lines', 'Time per line']];
  function changesPage() {
    show(el('p', {}, 'loading…'));
    load('changes').then(changes => {
      const parts = [el('h1', {}, 'Changes, as hotline diff prints them'),
        el('p', { class: 'note' }, 'One run a side: each interval is the sampling noise of the counts, ' + (100 * G.confidence) + '% for each table as a whole; ' +
          'a verdict of slower or faster needs the whole interval beyond ±' + (100 * G.threshold) + '%.')];
      for (const [key, title] of changeTables) {
        const c = changes[key], rows = c.rows.slice(0, 300);
        parts.push(el('h2', {}, title + ' (' + c.compared + ' compared)'));
        parts.push(table(['base', 'new', 'change', '%', 'interval', 'base %', 'new %', 'verdict', key === 'lines' ? 'line' : 'function'], rows.map(r => {
          const [name, file, line, base, next, baseShare, newShare, low, high, verdict, short] = r;
          const judged = verdict !== 'new' && verdict !== 'gone';
          const where = name ? el('span', { class: 'fname', title: name + (file ? ' (' + file + ')' : '') }, short) : file.split('/').pop() + (line ? ':' + line : '');
          return [fmtTime(base), fmtTime(next), fmtSigned(next - base), judged ? fmtChange(next / base - 1) : '',
            judged ? fmtChange(low) + ' … ' + fmtChange(high) : '', fmtPct(baseShare), fmtPct(newShare), el('span', { class: 'verdict ' + verdict.replace(' ', '-') }, verdict), where];
        })));
        if (c.rows.length > rows.length) parts.push(el('p', { class: 'note' }, 'the ' + rows.length + ' largest changes of ' + c.rows.length));
      }
      show(...parts);
      setReady();
    }).catch(failed);
  }

  // ---- history of a workload (hotline html --history) ----
  // One chart per series: the mean per commit (oldest on the left), each commit's min–max range as
  // a band and a bar, commits without runs as gaps, the change's commit marked, dirty commits
  // hollow. hotline computed every value and label; here they only become positions.
  function historyPage() {
    const h = D.history;
    document.title = 'hotline history: ' + h.workload;
    const facts = keyValues([['database', h.database], ['workload', h.workload], ['commits', String(h.commits.length)], ['series', String(h.series.length)]]);
    const tip = el('div', { id: 'history-tip', class: 'tip' });
    tip.hidden = true;
    const charts = h.series.map((s, i) => el('section', { class: 'series', 'data-series': String(i) },
      el('h2', { title: s.name + (s.file ? ' (' + s.file + ')' : '') }, s.file ? s.short + (s.self ? ', self time' : ', inclusive time') : s.short),
      historyChart(h, s, tip)));
    const totals = h.series.length ? h.series[0].values : [];
    const rows = h.commits.map((c, i) => [i, c]).reverse().map(([i, c]) => {
      const v = totals[i];
      return [el('span', { class: 'fname', title: c.commit }, c.short), c.date, c.branch, c.subject, v ? String(v[0]) : '0',
        v ? fmtTime(v[1]) : '', v ? fmtTime(v[2]) : '', v ? fmtTime(v[3]) : '', c.dirty ? 'uncommitted changes' : ''];
    });
    const commits = table(['commit', 'date', 'branch', 'subject', 'runs', 'total', 'min', 'max', ''], rows);
    commits.id = 'history-commits';
    show(el('h1', {}, 'History of ' + h.workload), facts, tip, ...charts, el('h2', {}, 'Commits, newest first'), commits);
    setReady();
  }
  function historyChart(h, s, tip) {
    const w = 900, ht = 240, left = 70, right = 40, top = 24, bottom = 36;
    const svg = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + ht, class: 'chart history-chart' });
    const count = h.commits.length;
    const x = i => left + (count > 1 ? i * (w - left - right) / (count - 1) : (w - left - right) / 2);
    const { step, ceiling } = roundAxis(Math.max(1, ...s.values.filter(v => v).map(v => v[3])));
    const y = ns => top + (ht - top - bottom) * (1 - ns / ceiling);
    for (let ns = 0; ns <= ceiling; ns += step) {
      svg.append(svgEl('line', { x1: left, x2: w - right, y1: y(ns), y2: y(ns), class: 'grid' }),
        svgEl('text', { x: left - 6, y: y(ns) + 4, 'text-anchor': 'end' }, fmtTime(Math.round(ns))));
    }
    const every = Math.max(1, Math.ceil(count / 12));
    h.commits.forEach((c, i) => {
      if (i % every === 0 || i === count - 1) svg.append(svgEl('text', { x: x(i), y: ht - bottom + 16, 'text-anchor': 'middle', class: 'commit' }, c.short));
      if (c.dirty) svg.append(svgEl('text', { x: x(i), y: ht - bottom + 30, 'text-anchor': 'middle', class: 'dirty-mark' }, 'dirty'));
    });
    // Runs of consecutive commits with values: a band and a line each; a commit without runs
    // breaks them.
    const segments = [];
    let run = [];
    s.values.forEach((v, i) => { if (v) run.push(i); else { if (run.length) segments.push(run); run = []; } });
    if (run.length) segments.push(run);
    for (const seg of segments) {
      if (seg.length > 1) {
        const band = seg.map(i => x(i) + ',' + y(s.values[i][3])).concat(seg.slice().reverse().map(i => x(i) + ',' + y(s.values[i][2])));
        svg.append(svgEl('polygon', { points: band.join(' '), class: 'band' }),
          svgEl('polyline', { points: seg.map(i => x(i) + ',' + y(s.values[i][1])).join(' '), class: 'mean' }));
      }
    }
    if (s.change_at !== null) {
      const cx = x(s.change_at);
      svg.append(svgEl('line', { x1: cx, x2: cx, y1: top - 10, y2: ht - bottom, class: 'change ' + (s.change > 0 ? 'slower' : 'faster') }),
        // Beside the marker, on the side with room.
        svgEl('text', { x: cx < w / 2 ? cx + 4 : cx - 4, y: top - 2, 'text-anchor': cx < w / 2 ? 'start' : 'end', class: 'change-label' }, s.label));
    }
    s.values.forEach((v, i) => {
      if (!v) return;
      const c = h.commits[i];
      const text = [c.short + (c.dirty ? ' (uncommitted changes)' : ''), c.subject, c.branch ? 'branch ' + c.branch : '', c.date,
        v[0] + (v[0] === 1 ? ' run' : ' runs'), 'mean ' + fmtTime(v[1]), 'min ' + fmtTime(v[2]), 'max ' + fmtTime(v[3])].filter(t => t).join('\n');
      const bar = svgEl('line', { x1: x(i), x2: x(i), y1: y(v[2]), y2: y(v[3]), class: 'range' });
      const point = svgEl('circle', { cx: x(i), cy: y(v[1]), r: 4, class: 'point' + (c.dirty ? ' dirty' : ''), 'data-commit': String(i) });
      point.append(svgEl('title', {}, text));
      point.addEventListener('mouseenter', e => { tip.textContent = text; tip.hidden = false; tip.style.left = e.clientX + 14 + 'px'; tip.style.top = e.clientY + 14 + 'px'; });
      point.addEventListener('mouseleave', () => { tip.hidden = true; });
      svg.append(bar, point);
    });
    return svg;
  }

  // ---- complexity (several runs of a sweep, or calls tagged by hotline_size) ----
  // hotline fitted every model and sampled each curve drawn (ModelFit::predict, at every size
  // with points among others); here the numbers only become positions, a table and words.
  const cxColours = 7;  // report.css's .cx-c0 … .cx-c6
  const cx = { measure: '', filter: '', logValues: false };
  function fmtAmount(v) {
    const units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [size, unit] of units) if (v >= size) return parseFloat((v / size).toPrecision(3)) + unit;
    return String(parseFloat(v.toPrecision(4)));
  }
  function complexityPage(selected) {
    show(el('p', {}, 'loading…'));
    load('complexity').then(C => {
      const measures = [...new Set(C.plots.map(p => p.row[11]))];
      const pick = el('select', { id: 'cx-measure', onchange: () => { cx.measure = pick.value; fill(); } },
        el('option', { value: '' }, 'every measure'), ...measures.map(m => el('option', { value: m }, m)));
      pick.value = cx.measure;
      const filter = el('input', { type: 'search', id: 'cx-filter', placeholder: 'filter names', value: cx.filter,
        oninput: () => { cx.filter = filter.value; fill(); } });
      const scale = el('button', { id: 'cx-scale', onclick: () => { cx.logValues = !cx.logValues; scale.textContent = scaleLabel(); fill(); } }, scaleLabel());
      const box = el('div');
      const note = el('p', { class: 'note' }, 'Each function\'s cost against its input size n, as hotline report -X fits it: ' +
        'cost(n) = a + b·g(n); error is the model\'s RMS error predicting each size from the others, margin the runner-up\'s error over the model\'s. ' +
        'Decided models first, drawn through the points; for an undecided row, each candidate\'s curve, dashed. Points are every run (or tagged call).');
      show(el('h1', {}, 'Complexity'), note, el('div', { class: 'controls' }, pick, filter, scale), box);
      function fill() {
        const shown = C.plots.map((p, i) => [p, i]).filter(([p]) =>
          (!cx.measure || p.row[11] === cx.measure) && (!cx.filter || p.name.includes(cx.filter)));
        const rows = shown.map(([p, i]) => p.row.slice(0, 13).concat([el('a', { href: '#complexity/' + i, title: p.name, class: 'fname' }, p.short)]));
        const summary = table(C.columns, rows);
        summary.id = 'cx-table';
        box.replaceChildren(summary, el('div', { class: 'cx-plots' }, ...shown.map(([p, i]) => complexityCard(p, i))));
      }
      fill();
      const target = selected >= 0 && document.getElementById('cx-' + selected);
      if (target) { target.classList.add('selected'); target.scrollIntoView(); }
      setReady();
    }).catch(failed);
  }
  function scaleLabel() { return cx.logValues ? 'values: log scale' : 'values: linear from 0'; }
  function complexityCard(p, i) {
    const r = p.row;
    const facts = keyValues([['verdict', r[0]], [r[0] === 'decided' ? 'model' : 'candidates', r[1]], ['a', r[2]], ['b', r[3]],
      ['error', r[4]], ['margin', r[5]], ['runner-up', r[6]], ['n', r[7] + ' … ' + r[8]], ['sizes', r[9]], ['points', r[10]],
      ['why', r[12]], ['definition', definitionLink(p.definition)]]);
    const legend = el('p', { class: 'legend' }, ...p.curves.map((c, k) => el('span', { class: 'cx-key' },
      el('span', { class: 'cx-swatch cx-c' + (k % cxColours) + (c.decided ? '' : ' dashed') }),
      c.model + (c.decided ? ' fitted' : ' (candidate)'))),
      p.medians.length ? el('span', { class: 'cx-key' }, el('span', { class: 'cx-swatch cx-median-key' }), 'median of each size (what the fit saw)') : null);
    const drawn = p.points.length, total = p.points_total;
    const notes = [];
    if (drawn + p.points_left_out < total) notes.push(drawn + ' of ' + total + ' points drawn, evenly thinned');
    if (p.points_left_out) notes.push(p.points_left_out + ' points of n = 0 left out (log n axis)');
    return el('section', { class: 'cx-plot', id: 'cx-' + i, 'data-name': p.short, 'data-measured': r[11], 'data-verdict': r[0] },
      el('h2', { title: p.name }, p.short + ', ' + r[11]),
      el('div', { class: 'cx-body' }, el('div', {}, complexityChart(p, i), p.curves.length || p.medians.length ? legend : null,
        ...notes.map(n => el('p', { class: 'note' }, n))), facts));
  }
  // "FILE:LINE" as the file's name and line, linked to the source when the report has it.
  function definitionLink(where) {
    const colon = where.lastIndexOf(':');
    if (colon < 0) return where;
    const path = where.slice(0, colon), line = Number(where.slice(colon + 1));
    const file = D.files.findIndex(f => f.path === path);
    const text = path.split('/').pop() + ':' + line;
    return file >= 0 && D.files[file].source ? el('a', { href: sourceLink(file, line), title: path }, text) : el('span', { title: path }, text);
  }
  function complexityChart(p, i) {
    const w = 460, ht = 280, left = 64, right = 24, top = 14, bottom = 40;
    const svg = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + ht, class: 'chart cx-chart' });
    const sizes = [...new Set(p.points.map(q => q[0]))].sort((a, b) => a - b);
    let nlo = sizes.length ? sizes[0] : 1, nhi = sizes.length ? sizes[sizes.length - 1] : 1;
    if (nhi === nlo) { nlo = p.log_n ? nlo / 2 : nlo - 1; nhi = p.log_n ? nhi * 2 : nhi + 1; }
    const scale = p.log_n ? n => Math.log(n) : n => n;
    const x = n => left + (w - left - right) * (scale(n) - scale(nlo)) / (scale(nhi) - scale(nlo));
    let highest = 0, lowest = Infinity;
    const seen = v => { highest = Math.max(highest, v); if (v > 0) lowest = Math.min(lowest, v); };
    for (const q of p.points) seen(q[1]);
    for (const c of p.curves) if (c.decided) for (const s of c.samples) seen(s[1]);
    const label = p.counted ? fmtAmount : v => fmtTime(Math.round(v));
    const plotHeight = ht - top - bottom;
    let y, values = [];
    if (cx.logValues) {
      // Whole decades around the values; a value of 0 sits on the bottom edge.
      if (!(lowest < Infinity)) lowest = highest = 1;
      const lo = Math.floor(Math.log10(lowest)), hi = Math.max(lo + 1, Math.ceil(Math.log10(highest)));
      y = v => top + plotHeight * (1 - (Math.log10(Math.max(v, Math.pow(10, lo))) - lo) / (hi - lo));
      for (let d = lo; d <= hi; ++d) {
        values.push(Math.pow(10, d));
        if (hi - lo <= 2 && d < hi) values.push(2 * Math.pow(10, d), 5 * Math.pow(10, d));
      }
    } else {
      const { step, ceiling } = roundAxis(Math.max(highest, p.counted ? 1 : 10));
      y = v => top + plotHeight * (1 - v / ceiling);
      for (let v = 0; v <= ceiling * 1.0001; v += step) values.push(v);
    }
    for (const v of values)
      svg.append(svgEl('line', { x1: left, x2: w - right, y1: y(v), y2: y(v), class: 'grid' }),
        svgEl('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, label(v)));
    // The sizes themselves when few, else round values of n.
    let ticks = sizes;
    if (sizes.length > 10) {
      ticks = [];
      if (p.log_n) {
        for (let d = Math.pow(10, Math.floor(Math.log10(nlo))); d <= nhi; d *= 10)
          for (const m of [1, 2, 5]) if (m * d >= nlo && m * d <= nhi) ticks.push(m * d);
        if (ticks.length > 8) ticks = ticks.filter(t => Number.isInteger(Math.log10(t)));
      } else {
        const a = roundAxis(nhi);
        for (let n = 0; n <= nhi; n += a.step) if (n >= nlo) ticks.push(n);
      }
    }
    for (const n of ticks)
      svg.append(svgEl('line', { x1: x(n), x2: x(n), y1: top, y2: ht - bottom, class: 'grid' }),
        svgEl('text', { x: x(n), y: ht - bottom + 16, 'text-anchor': 'middle' }, n < 1e5 ? String(n) : fmtAmount(n)));
    svg.append(svgEl('text', { x: w - right, y: ht - 6, 'text-anchor': 'end', class: 'axis-name' },
      'n' + (p.log_n ? ' (log scale)' : '')));
    // Curves beyond the plot (a candidate that grows faster than the points) are cut at its edge.
    const clip = svgEl('clipPath', { id: 'cx-clip-' + i });
    clip.append(svgEl('rect', { x: left, y: top, width: w - left - right, height: ht - top - bottom }));
    svg.append(clip);
    p.curves.forEach((c, k) => {
      const line = svgEl('polyline', { points: c.samples.map(s => x(s[0]).toFixed(2) + ',' + y(s[1]).toFixed(2)).join(' '),
        class: 'cx-curve cx-c' + (k % cxColours) + (c.decided ? ' decided' : ' candidate'), 'clip-path': 'url(#cx-clip-' + i + ')',
        'data-model': c.model });
      line.append(svgEl('title', {}, c.model + (c.decided ? ', decided' : ', a candidate')));
      svg.append(line);
    });
    const unit = p.counted ? (p.row[11].startsWith('lines') ? ' lines' : ' calls') : '';
    for (const [n, v] of p.medians) {
      const mark = svgEl('line', { x1: x(n) - 7, x2: x(n) + 7, y1: y(v).toFixed(2), y2: y(v).toFixed(2), class: 'cx-median' });
      mark.append(svgEl('title', {}, 'median at n = ' + n + ': ' + (p.counted ? v + unit : fmtTime(Math.round(v)))));
      svg.append(mark);
    }
    for (const [n, v] of p.points) {
      const point = svgEl('circle', { cx: x(n).toFixed(2), cy: y(v).toFixed(2), r: 3, class: 'cx-point' });
      point.append(svgEl('title', {}, 'n = ' + n + ': ' + (p.counted ? v + unit : fmtTime(Math.round(v)))));
      svg.append(point);
    }
    return svg;
  }

  route();
})();

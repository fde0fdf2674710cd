// Opens profiles in speedscope (the npm package's own app) in headless Chromium, driven by
// puppeteer-core, and prints, for each, the function speedscope's sandwich view lists first
// (the largest self time), or why the import failed: `PROFILE<TAB>TOP<TAB>name` or
// `PROFILE<TAB>ERROR<TAB>why`. speedscope chooses the importer by the file's name, then by its
// content: a Trace Event file must not end in .chrome.json (that is Chrome's performance panel's
// format), a folded file is recognised by its content.
//   node speedscope_import.js NODE_MODULES CHROMIUM PROFILE...
// Exits 0 when every profile imported, 1 otherwise.
'use strict';
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const [modules, chromium, ...profiles] = process.argv.slice(2);
const puppeteer = require(path.join(modules, 'puppeteer-core'));
const release = path.join(modules, 'speedscope', 'dist', 'release');

// speedscope fetches the profile by URL: serve its release folder and the profiles.
function serve() {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
    const file = url.startsWith('/profile/') ? url.slice('/profile'.length) : path.join(release, url === '/' ? 'index.html' : url);
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
      res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function topFunction(browser, port, profile) {
  const page = await browser.newPage();
  const problems = [];
  page.on('dialog', async (d) => { problems.push(d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => problems.push(String(e)));
  // speedscope logs an import failure ("Failed to load format", the error) and shows a notice.
  page.on('console', async (m) => {
    if (m.type() !== 'error' && !/Failed/.test(m.text())) return;
    const details = await Promise.all(m.args().map((a) => a.evaluate((v) => (v && v.stack) || String(v)).catch(() => '?')));
    problems.push(details.join(' '));
  });
  const url = `http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/profile${profile}`)}&view=sandwich`;
  await page.goto(url, { waitUntil: 'networkidle0' });
  // The sandwich view's table: one row per function, by self time, largest first.
  let text = '';
  for (let i = 0; i < 100 && problems.length === 0; ++i) {
    text = await page.evaluate(() => document.body.innerText);
    if (/Symbol Name/.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.close();
  if (problems.length) return { error: problems.join('; ') };
  // Rows after the header are three lines each: total, self, name.
  const rows = text.split('Symbol Name\n')[1];
  if (rows === undefined) return { error: 'no sandwich table: ' + text.slice(0, 200) };
  return { top: rows.split('\n')[2].replace(/^\t/, '') };
}

(async () => {
  const server = await serve();
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  let failed = false;
  for (const profile of profiles) {
    const r = await topFunction(browser, server.address().port, path.resolve(profile));
    if (r.error) { console.log(`${profile}\tERROR\t${r.error}`); failed = true; continue; }
    console.log(`${profile}\tTOP\t${r.top}`);
  }
  await browser.close();
  server.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log(`ERROR\t${e}`); process.exit(1); });

// Judge0's browser clients' request patterns in a real browser: Debian's
// Chromium, headless, driven by puppeteer-core, against a running stack.
// The pages (judge0_pages/ide.html, judge0_pages/dummy.html) are served
// from another origin than the API, as the IDE and the dummy client are;
// used by tests/integration/test_browser_clients.sh.
//
//   node judge0_pages.mjs PAGES_BASE API_BASE KEY FIRST_TAP_NUMBER
//
// Prints CHECKS TAP results numbered from FIRST_TAP_NUMBER and exits
// non-zero when one failed.
import puppeteer from 'puppeteer-core';

export const CHECKS = 8;

const [pagesBase, apiBase, key, firstArg] = process.argv.slice(2);
if (!pagesBase || !apiBase || !key || !firstArg) {
	console.error('usage: node judge0_pages.mjs PAGES_BASE API_BASE KEY FIRST_TAP_NUMBER');
	process.exit(2);
}
let tapN = Number(firstArg) - 1;
let failed = 0;
const WAIT_MS = 150000; // a judged run on a loaded 2-core machine

function report(ok, name, detail) {
	tapN++;
	console.log(`${ok ? 'ok' : 'not ok'} ${tapN} - ${name}`);
	if (!ok) {
		failed++;
		for (const l of String(detail || '').split('\n').slice(0, 10))
			console.log('# ' + l);
	}
}

function check(name, cond, detail) {
	report(Boolean(cond), name, detail);
}

// As tests/js/playground_page.mjs: Chromium refuses its own sandbox as
// root, and the harness runs as root; the pages are ours.
const args = ['--disable-gpu', '--no-first-run', '--lang=en-US'];
if (process.getuid && process.getuid() === 0)
	args.push('--no-sandbox');
const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args,
});

// Opens a page, clicks Run, waits for a final status or an error; returns
// what the page showed and every API request and response.
async function drive(file) {
	const page = await browser.newPage();
	const requests = []; // { method, url, headers }
	const responses = []; // { method, url, status }
	page.on('request', (r) => {
		if (r.url().startsWith(apiBase))
			requests.push({ method: r.method(), url: r.url(), headers: r.headers() });
	});
	page.on('response', (r) => {
		if (r.url().startsWith(apiBase))
			responses.push({ method: r.request().method(), url: r.url(), status: r.status() });
	});
	const url = `${pagesBase}/${file}?api=${encodeURIComponent(apiBase)}&key=${encodeURIComponent(key)}`;
	await page.goto(url, { waitUntil: 'load' });
	await page.click('#run');
	let shown = { status: '', output: '', error: '' };
	try {
		await page.waitForFunction(
			() => document.getElementById('status').textContent !== '' ||
				document.getElementById('error').textContent !== '',
			{ timeout: WAIT_MS, polling: 200 });
	} catch (e) {
		shown.error = 'no result in time: ' + e.message;
	}
	const got = await page.evaluate(() => ({
		status: document.getElementById('status').textContent,
		output: (document.getElementById('output') || document.getElementById('log')).textContent,
		error: document.getElementById('error').textContent,
	}));
	shown = { ...got, error: got.error || shown.error };
	await page.close();
	return { shown, requests, responses };
}

const keyIn = (r) => Object.keys(r.headers).some((h) => h.toLowerCase() === 'x-auth-token' ||
	h.toLowerCase() === 'authorization' || h.toLowerCase() === 'x-api-key');
const summary = (x) => JSON.stringify({ shown: x.shown,
	requests: x.requests.map((r) => `${r.method} ${r.url.replace(key, 'KEY')} ${keyIn(r) ? '(key header)' : ''}`).slice(0, 6),
	responses: x.responses.map((r) => `${r.method} ${r.status}`).slice(0, 12) });

// Judge0 IDE: the key header on the POST only, polling without a key
// every 100 ms, its default C++ compiler options.
const ide = await drive('ide.html');
const idePost = ide.requests.filter((r) => r.method === 'POST');
const idePolls = ide.requests.filter((r) => r.method === 'GET');
const idePollCodes = ide.responses.filter((r) => r.method === 'GET').map((r) => r.status);
check('Judge0 IDE pattern: the C++ program with the IDE\'s default compiler options (--std=c++17, -W*, -pedantic-errors) is judged Accepted, its output shown',
	ide.shown.status === 'Accepted' && ide.shown.output === 'hello, gavel' && !ide.shown.error, summary(ide));
check('Judge0 IDE pattern: one POST /submissions?base64_encoded=true&wait=false, with the key in X-Auth-Token, answered 201',
	idePost.length === 1 && /\/submissions\?base64_encoded=true&wait=false$/.test(idePost[0].url) && keyIn(idePost[0]) &&
	ide.responses.some((r) => r.method === 'POST' && r.status === 201), summary(ide));
check('Judge0 IDE pattern: its polls GET /submissions/{token}?base64_encoded=true carry no key (no header, no query) and are all answered 200',
	idePolls.length >= 1 && idePolls.every((r) => !keyIn(r) && !r.url.includes(key) && /\/submissions\/[A-Za-z0-9_-]+\?base64_encoded=true$/.test(r.url)) &&
	idePollCodes.length === idePolls.length && idePollCodes.every((c) => c === 200), summary(ide));
check('Judge0 IDE pattern: polling every 100 ms meets no 429 and no 401',
	!ide.responses.some((r) => r.status === 429 || r.status === 401), summary(ide));

// Judge0's dummy client: the key only in the query, polling every 1.5 s.
const dummy = await drive('dummy.html');
const dPost = dummy.requests.filter((r) => r.method === 'POST');
const dPolls = dummy.requests.filter((r) => r.method === 'GET');
check('dummy client pattern: the C hello with stdin Judge0 and its expected output is judged Accepted',
	dummy.shown.status === 'Accepted' && !dummy.shown.error, summary(dummy));
check('dummy client pattern: POST /submissions?X-Auth-Token=KEY, no key header, answered 201',
	dPost.length === 1 && dPost[0].url.endsWith('/submissions?X-Auth-Token=' + encodeURIComponent(key)) && !keyIn(dPost[0]) &&
	dummy.responses.some((r) => r.method === 'POST' && r.status === 201), summary(dummy));
check('dummy client pattern: its polls GET /submissions/{token}?X-Auth-Token=KEY are answered 200',
	dPolls.length >= 1 && dPolls.every((r) => r.url.includes('?X-Auth-Token=')) &&
	dummy.responses.filter((r) => r.method === 'GET').every((r) => r.status === 200), summary(dummy));
check('both pages: every API response was readable cross-origin (no CORS error shown)',
	!/^0 /.test(ide.shown.error) && !/^0 /.test(dummy.shown.error), summary(ide) + '\n' + summary(dummy));

await browser.close();
process.exit(failed ? 1 : 0);

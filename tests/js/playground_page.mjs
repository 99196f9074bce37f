// The playground page in a real browser: Debian's Chromium, headless,
// driven by puppeteer-core (pinned in package.json) against a running
// stack. Used by tests/integration/test_playground_page.sh, which starts
// the stack and says which URL to open.
//
//   node playground_page.mjs PAGE_URL FIRST_TAP_NUMBER SCREENSHOT [KEY]
//
// PAGE_URL is the page (.../playground/{tenant}/). With KEY the page is
// used as at a key-protected path: the key is typed into its key field.
// Prints CHECKS TAP results numbered from FIRST_TAP_NUMBER, keyboard only
// (no mouse event is sent), and exits non-zero when one failed.
import puppeteer from 'puppeteer-core';

export const CHECKS = 12;

const [pageUrl, firstArg, screenshot, key = ''] = process.argv.slice(2);
if (!pageUrl || !firstArg || !screenshot) {
	console.error('usage: node playground_page.mjs PAGE_URL FIRST_TAP_NUMBER SCREENSHOT [KEY]');
	process.exit(2);
}
let tapN = Number(firstArg) - 1;
let failed = 0;
const WAIT_MS = 120000; // a run's sandbox on a loaded 2-core machine

function report(ok, name, detail) {
	tapN++;
	console.log(`${ok ? 'ok' : 'not ok'} ${tapN} - ${name}`);
	if (!ok) {
		failed++;
		for (const l of String(detail || '').split('\n').slice(0, 8))
			console.log('# ' + l);
	}
}

async function step(name, fn) {
	try {
		await fn();
		report(true, name);
	} catch (e) {
		report(false, name, e && e.stack ? e.stack : String(e));
	}
}

function assert(cond, msg) {
	if (!cond)
		throw new Error(msg);
}

// Chromium will not start as root with its own sandbox (it exits with
// "Running as root without --no-sandbox is not supported"), and the test
// harness runs as root (runsc and cgroups need it). The page is ours and
// the browser visits only the local frontend, so the test runs without
// Chromium's sandbox only then.
const args = ['--disable-gpu', '--no-first-run', '--lang=en-US'];
if (process.getuid && process.getuid() === 0)
	args.push('--no-sandbox');

const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args,
});

const dialogs = [];
const consoleErrors = [];
const requests = []; // { method, url, auth }
const responses = []; // { url, status, type }
let intercepting = false; // request interception is on
let abortEvents = false;  // and aborts the event streams

const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
page.on('dialog', async (d) => {
	dialogs.push(d.message());
	await d.dismiss().catch(() => {});
});
page.on('console', (m) => {
	if (m.type() === 'error')
		consoleErrors.push(m.text());
});
page.on('pageerror', (e) => consoleErrors.push('pageerror: ' + e.message));
page.on('request', (r) => {
	requests.push({ method: r.method(), url: r.url(), auth: 'authorization' in r.headers() });
	if (!intercepting)
		return;
	if (abortEvents && r.url().endsWith('/events'))
		r.abort('failed');
	else
		r.continue();
});
page.on('response', (r) => {
	responses.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] || '' });
});
// Violations of the page's Content-Security-Policy, recorded from inside
// the page (devtools injects this script; the CSP does not apply to it).
await page.evaluateOnNewDocument(() => {
	window.__csp = [];
	document.addEventListener('securitypolicyviolation', (e) => {
		window.__csp.push(e.violatedDirective + ' ' + e.blockedURI);
	});
	window.__states = [];
	document.addEventListener('DOMContentLoaded', () => {
		const s = document.getElementById('status');
		if (!s)
			return;
		new MutationObserver(() => {
			const st = s.dataset.state;
			if (window.__states[window.__states.length - 1] !== st)
				window.__states.push(st);
		}).observe(s, { attributes: true, attributeFilter: ['data-state'] });
	});
});

const text = (sel) => page.$eval(sel, (e) => e.textContent);
const apiPath = new URL('v1/submissions', pageUrl).pathname;

async function keys(combo) { // "Control+a"
	const parts = combo.split('+');
	for (const k of parts.slice(0, -1))
		await page.keyboard.down(k);
	await page.keyboard.press(parts[parts.length - 1]);
	for (const k of parts.slice(0, -1).reverse())
		await page.keyboard.up(k);
}

// Replaces the editor's text by typing (Tab keys included) and stdin.
async function typeProgram(lang, code, stdin) {
	await page.select('#language', lang);
	await page.focus('#code');
	await keys('Control+a');
	await page.keyboard.press('Backspace');
	// Each tab as a Tab key press: the page's editor indents on Tab.
	const parts = code.split('\t');
	for (let i = 0; i < parts.length; i++) {
		if (i > 0)
			await page.keyboard.press('Tab');
		await page.keyboard.type(parts[i]);
	}
	await page.focus('#stdin');
	await keys('Control+a');
	await page.keyboard.press('Backspace');
	if (stdin)
		await page.keyboard.type(stdin);
}

// Runs with Ctrl+Enter and waits for the result; returns what the page
// shows.
async function runAndWait() {
	await page.evaluate(() => {
		window.__states = [];
	});
	const before = requests.length;
	await keys('Control+Enter');
	await page.waitForFunction(() => {
		const st = document.getElementById('status').dataset.state;
		return ['done', 'failed', 'cancelled', 'error'].includes(st);
	}, { timeout: WAIT_MS });
	return shown(before);
}

async function shown(before) {
	const r = await page.evaluate(() => ({
		state: document.getElementById('status').dataset.state,
		status: document.getElementById('status').textContent,
		verdict: document.getElementById('verdict').textContent,
		stdout: document.getElementById('stdout').textContent,
		stderr: document.getElementById('stderr').textContent,
		compile: document.getElementById('compile-output').textContent,
		time: document.getElementById('time').textContent,
		memory: document.getElementById('memory').textContent,
		exit: document.getElementById('exit').textContent,
		permalink: document.getElementById('permalink').getAttribute('href'),
		language: document.getElementById('language').value,
		states: window.__states.slice(),
		imgs: document.querySelectorAll('img').length,
		scripts: document.querySelectorAll('script').length,
	}));
	r.requests = requests.slice(before);
	return r;
}

const describe = (r) => JSON.stringify(Object.assign({}, r, { requests: r.requests.map((q) => q.method + ' ' + q.url) }));

let firstRun = null;

try {
	await step('the page loads from its tenant path and lists the languages (C and Python 3 available)', async () => {
		const res = await page.goto(pageUrl, { waitUntil: 'load' });
		assert(res.status() === 200, 'status ' + res.status());
		await page.waitForFunction(() => !document.getElementById('language').disabled, { timeout: 30000 });
		const opts = await page.$$eval('#language option', (os) => os.map((o) => [o.value, o.disabled]));
		const ok = (id) => opts.some(([v, d]) => v === id && !d);
		assert(ok('c') && ok('python3'), 'options ' + JSON.stringify(opts));
		assert(await page.title() === 'Gavel playground', 'title');
		if (key) {
			await page.focus('#key-box summary');
			await page.keyboard.press('Enter'); // opens the <details>
			await page.focus('#api-key');
			await page.keyboard.type(key);
		}
	});

	await step('Python 3 typed with Tab indentation and stdin, run with Ctrl+Enter: queued → running → AC streamed over SSE, stdout, time, memory, exit code', async () => {
		const program = 'import sys\nfor line in sys.stdin:\n\tprint(line.strip()[::-1])\nprint("done")\n';
		await typeProgram('python3', program, 'abc\nhello\n');
		const code = await page.$eval('#code', (e) => e.value);
		assert(code === program, 'the editor holds ' + JSON.stringify(code));
		const r = await runAndWait();
		firstRun = r;
		assert(r.state === 'done' && r.verdict === 'AC', describe(r));
		assert(r.stdout === 'cba\nolleh\ndone\n', 'stdout ' + JSON.stringify(r.stdout));
		assert(/^\d+ ms$/.test(r.time) && /(KiB|MiB)$/.test(r.memory) && r.exit === '0', describe(r));
		assert(r.states.includes('queued') && r.states.includes('running') &&
			r.states.indexOf('running') < r.states.indexOf('done'), 'states ' + r.states.join(','));
		const id = (r.permalink || '').replace(/^#id=/, '');
		assert(/^[A-Za-z0-9_-]+$/.test(id), 'permalink ' + r.permalink);
		const ev = responses.find((x) => x.url.endsWith(`/submissions/${id}/events`));
		assert(ev && ev.status === 200 && ev.type.startsWith('text/event-stream'), 'events ' + JSON.stringify(ev));
		const polls = r.requests.filter((q) => q.method === 'GET' && new URL(q.url).pathname === `${apiPath}/${id}`);
		assert(polls.length === 0, 'polled instead of streaming: ' + polls.length);
		assert(new URL(page.url()).hash === '#id=' + id, 'address ' + page.url());
		await page.screenshot({ path: screenshot, fullPage: true });
	});

	await step('keyboard: in the editor Tab indents, Esc then Tab moves on to the stdin box (no trap)', async () => {
		await page.focus('#code');
		await page.keyboard.press('Tab');
		let at = await page.evaluate(() => document.activeElement.id);
		assert(at === 'code', 'Tab left the editor: ' + at);
		await page.keyboard.press('Escape');
		await page.keyboard.press('Tab');
		at = await page.evaluate(() => document.activeElement.id);
		assert(at === 'stdin', 'focus on ' + at);
	});

	await step('C that does not compile: CE and the compiler message shown', async () => {
		await typeProgram('c', 'int main(void)\n{\n\treturn x;\n}\n', '');
		const r = await runAndWait();
		assert(r.state === 'done' && r.verdict === 'CE', describe(r));
		assert(r.compile.includes('undeclared'), 'compiler output ' + JSON.stringify(r.compile));
	});

	await step('hostile program output (<img onerror>, <script>) is shown as text: no element, no dialog', async () => {
		await typeProgram('python3',
			'import sys\nprint("<img src=x onerror=alert(1)>")\nsys.stderr.write("<script>alert(2)</script>\\n")\n', '');
		const r = await runAndWait();
		assert(r.state === 'done' && r.verdict === 'AC', describe(r));
		assert(r.stdout === '<img src=x onerror=alert(1)>\n', 'stdout ' + JSON.stringify(r.stdout));
		assert(r.stderr === '<script>alert(2)</script>\n', 'stderr ' + JSON.stringify(r.stderr));
		assert(r.imgs === 0 && r.scripts === 1, `imgs ${r.imgs}, scripts ${r.scripts}`);
		assert(dialogs.length === 0, 'dialogs ' + dialogs.join(','));
	});

	await step('hostile compiler output (#error <img onerror>) is shown as text', async () => {
		await typeProgram('c', '#error <img src=y onerror=alert(3)>\nint main(void) { return 0; }\n', '');
		const r = await runAndWait();
		assert(r.state === 'done' && r.verdict === 'CE', describe(r));
		assert(r.compile.includes('<img src=y onerror=alert(3)>'), 'compiler output ' + JSON.stringify(r.compile));
		assert(r.imgs === 0 && dialogs.length === 0, `imgs ${r.imgs}, dialogs ${dialogs.join(',')}`);
	});

	await step('the permalink #id=… opened afresh shows that submission again (AC, its stdout, its language)', async () => {
		assert(firstRun && firstRun.permalink, 'no first run');
		const url = new URL(firstRun.permalink, pageUrl).href;
		await page.goto('about:blank');
		await page.goto(url, { waitUntil: 'load' });
		await page.waitForFunction(() => document.getElementById('status').dataset.state === 'done', { timeout: WAIT_MS });
		const r = await shown(requests.length);
		assert(r.verdict === 'AC' && r.stdout === 'cba\nolleh\ndone\n' && r.language === 'python3', describe(r));
		assert(r.permalink === firstRun.permalink, 'permalink ' + r.permalink);
	});

	await step('when the event stream fails the page polls GET v1/submissions/{id} and still shows the verdict', async () => {
		intercepting = true;
		abortEvents = true;
		await page.setRequestInterception(true);
		try {
			await typeProgram('python3', 'print(6 * 7)\n', '');
			const r = await runAndWait();
			assert(r.state === 'done' && r.verdict === 'AC' && r.stdout === '42\n', describe(r));
			const id = (r.permalink || '').replace(/^#id=/, '');
			const polls = r.requests.filter((q) => q.method === 'GET' && new URL(q.url).pathname === `${apiPath}/${id}`);
			assert(polls.length >= 1, 'no polling GET: ' + describe(r));
		} finally {
			abortEvents = false;
			await page.setRequestInterception(false);
			intercepting = false;
		}
	});

	if (key) {
		await step('without the key this path answers 401 and the page asks for a key', async () => {
			await page.focus('#forget-key');
			await page.keyboard.press('Enter');
			await typeProgram('python3', 'print(1)\n', '');
			const r = await runAndWait();
			assert(r.state === 'error' && /API key/.test(r.status), describe(r));
			assert(await page.$eval('#key-box', (d) => d.open), 'key box closed');
			const sent = requests.filter((q) => q.auth).length;
			assert(sent > 0, 'the key was never sent as Authorization');
			await page.focus('#api-key');
			await page.keyboard.type(key);
		});
	} else {
		await step('anonymous: no request carried an Authorization header', async () => {
			const sent = requests.filter((q) => q.auth);
			assert(sent.length === 0, 'sent: ' + sent.map((q) => q.url).join(' '));
		});
	}

	await step('no dialog, no console error and no CSP violation while using the page', async () => {
		const csp = await page.evaluate(() => window.__csp.slice());
		// The aborted event streams of the polling step log a network
		// error: that is the test's doing, not the page's.
		const errors = consoleErrors.filter((m) => !/net::ERR_FAILED|Failed to load resource/.test(m));
		assert(dialogs.length === 0 && errors.length === 0 && csp.length === 0,
			JSON.stringify({ dialogs, errors, csp }));
	});

	await step('the CSP is enforced: markup injected into the page cannot run an inline handler', async () => {
		const ran = await page.evaluate(async () => {
			const d = document.createElement('div');
			d.innerHTML = '<img src="no-such-image" onerror="window.__pwned = 1">';
			document.body.append(d);
			await new Promise((r) => setTimeout(r, 300));
			const v = window.__pwned === 1;
			d.remove();
			return { v, csp: window.__csp.slice() };
		});
		assert(!ran.v, 'an inline handler ran');
		assert(ran.csp.length > 0, 'no violation reported');
	});

	await step('a screenshot of the page with a result was written', async () => {
		const { statSync } = await import('node:fs');
		assert(statSync(screenshot).size > 10000, 'screenshot too small');
	});
} finally {
	await browser.close();
}
while (tapN < Number(firstArg) - 1 + CHECKS)
	report(false, 'not reached');
process.exit(failed ? 1 : 0);

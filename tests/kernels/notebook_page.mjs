// The classic Jupyter Notebook page (Debian's python3-notebook 6.4, its
// own JavaScript, unchanged) in Debian's headless Chromium, driven by
// puppeteer-core (pinned in tests/js): open a notebook, wait for its
// kernel, run its first cell with Shift+Enter, wait for the output.
// tests/kernels/notebook_page.py starts the notebook server (with
// --gateway-url pointing at the kernel gateway under test), writes the
// notebook and calls this.
//
//   node tests/kernels/notebook_page.mjs NOTEBOOK_URL EXPECTED SCREENSHOT
//
// NOTEBOOK_URL: .../notebooks/NAME.ipynb?token=T (the notebook server's own
// token; the page keeps it in a cookie). EXPECTED: the text the first
// cell's output must show. Prints `ok N what` / `FAIL N what` lines, saves
// SCREENSHOT (PNG) in every case, exits non-zero when a check failed.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// puppeteer-core lives in tests/js/node_modules (tests/js/README.md).
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../js/package.json'));
const puppeteer = require('puppeteer-core');

export const CHECKS = 4;
const [nbUrl, expected, screenshot] = process.argv.slice(2);
if (!nbUrl || !expected || !screenshot) {
	console.error('usage: node notebook_page.mjs NOTEBOOK_URL EXPECTED SCREENSHOT');
	process.exit(2);
}
const WAIT_MS = 180000; // a kernel's sandbox on a loaded 2-core machine
let n = 0;
let failed = 0;
function report(ok, what, detail) {
	n++;
	console.log(`${ok ? 'ok' : 'FAIL'} ${n} ${what}`);
	if (!ok) {
		failed++;
		for (const l of String(detail || '').split('\n').slice(0, 10))
			console.log('# ' + l);
	}
}
async function check(what, fn) {
	try {
		const note = await fn();
		report(true, what + (note ? ` (${note})` : ''));
		return true;
	} catch (e) {
		report(false, what, e && e.stack ? e.stack : String(e));
		return false;
	}
}

// As tests/js/playground_page.mjs: Chromium's own sandbox only when not
// root (it refuses to start as root with it).
const args = ['--disable-gpu', '--no-first-run', '--lang=en-US'];
if (process.getuid && process.getuid() === 0)
	args.push('--no-sandbox');
const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args,
});
const page = await browser.newPage();
await page.setViewport({ width: 1200, height: 800 });
const errors = [];
const sockets = []; // WebSocket URLs the page opened (token hidden)
page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
page.on('dialog', async (d) => {
	errors.push('dialog: ' + d.message());
	await d.dismiss().catch(() => {});
});
const cdp = await page.createCDPSession();
await cdp.send('Network.enable');
cdp.on('Network.webSocketCreated', (e) => sockets.push(e.url.replace(/token=[^&]*/, 'token=<t>')));

const kernelState = () => page.evaluate(() => {
	const k = window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel;
	return k ? { id: k.id, name: k.name, connected: k.is_connected(), ready: !!k.info_reply && !!k.info_reply.protocol_version,
		icon: document.getElementById('kernel_indicator_icon')?.className || '' } : null;
});

try {
	await check('the notebook page loads (Jupyter.notebook, its first cell)', async () => {
		const resp = await page.goto(nbUrl, { waitUntil: 'load', timeout: 60000 });
		if (!resp || resp.status() !== 200)
			throw new Error(`GET: ${resp && resp.status()}`);
		await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded &&
			Jupyter.notebook.get_cells().length >= 1, { timeout: 60000 });
	});

	let kernel = null;
	await check('its kernel starts (a session through the notebook server) and is idle, the WebSocket connected', async () => {
		await page.waitForFunction(() => {
			const k = window.Jupyter && Jupyter.notebook.kernel;
			return k && k.is_connected() && k.info_reply && k.info_reply.protocol_version &&
				document.getElementById('kernel_indicator_icon').classList.contains('kernel_idle_icon');
		}, { timeout: WAIT_MS, polling: 200 });
		kernel = await kernelState();
		return `kernel ${kernel.id} (${kernel.name}), WebSocket ${sockets[sockets.length - 1] || '?'}`;
	});

	await check(`Shift+Enter on the first cell: its output shows ${JSON.stringify(expected)}`, async () => {
		await page.evaluate(() => {
			Jupyter.notebook.select(0);
			Jupyter.notebook.get_cell(0).focus_editor();
		});
		await page.keyboard.down('Shift');
		await page.keyboard.press('Enter');
		await page.keyboard.up('Shift');
		const sel = '.cell:first-child .output_area .output_subarea';
		await page.waitForFunction((sel, want) => {
			const o = document.querySelector(sel);
			return o && o.textContent.trim() === want;
		}, { timeout: WAIT_MS, polling: 200 }, sel, expected);
		const prompt = await page.$eval('.cell:first-child .input_prompt', (e) => e.textContent.replace(/\s+/g, ' ').trim());
		if (!/\[1\]/.test(prompt))
			throw new Error(`input prompt ${prompt}`);
		return `prompt "${prompt}"`;
	});

	await check('no page error or dialog', async () => {
		// The notebook's own "kernel restarting/dead" dialogs would land here.
		if (errors.length)
			throw new Error(errors.join('\n'));
	});
} finally {
	await page.screenshot({ path: screenshot }).catch((e) => console.log('# screenshot: ' + e.message));
	await browser.close();
}
console.log(`# ${n - failed} of ${n} checks passed; screenshot ${screenshot}`);
process.exit(failed ? 1 : 0);

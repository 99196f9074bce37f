// A Jupyter kernel gateway driven by JupyterLab's own client library,
// @jupyterlab/services (pinned in package.json), unchanged: the code that
// JupyterLab 4 runs in the browser, here under Node.js with the `ws`
// package it depends on. Used against Gavel's kernel API and, to develop
// and check this script itself, against a plain jupyter_server
// (tests/kernels/run_services_dev.sh).
//
//   node jupyter_services_run.mjs BASE_URL TOKEN [v1|legacy|both]
//
// BASE_URL is the server's base (http://host:port/ or .../prefix/; the
// client appends api/kernelspecs, api/kernels, ...). TOKEN is sent as
// `Authorization: token ...` on every REST call and as `?token=` on the
// channels WebSocket (a browser's WebSocket cannot carry a header, and
// @jupyterlab/services appends the token to the URL whenever it runs
// outside a page). JUPYTER_WS_URL overrides the WebSocket base (default:
// BASE_URL with http turned into ws).
//
// The WebSocket framing is forced through the one hook the library has
// for it, ServerConnection.ISettings.WebSocket (the constructor it calls as
// `new WebSocket(url, protocols)`):
//   v1      only `v1.kernel.websocket.jupyter.org` is offered (what the
//           library offers by default); the server must select it.
//   legacy  no subprotocol is offered (what the library falls back to
//           against a server that knows none): JSON text frames.
//   auto    the library's own choice, unforced: it offers v1 and, after a
//           failed connection that never selected one, retries offering
//           nothing; the check then only reports the framing it got.
// The library then serialises according to the protocol the server
// selected (settings.serializer, its default one), so everything else is
// the library's own code path.
//
// Prints one line per check, `ok <n> <what>` or `FAIL <n> <what>` followed
// by `# ` detail lines, and `# ` lines with figures (interrupt latency);
// exits non-zero when a check failed. CHECKS checks per framing.
import WS from 'ws';
import {
	KernelAPI,
	KernelManager,
	KernelSpecAPI,
	ServerConnection,
} from '@jupyterlab/services';

export const CHECKS = 11;
const V1 = 'v1.kernel.websocket.jupyter.org';

const [baseArg, tokenArg, modeArg = 'both'] = process.argv.slice(2);
const baseUrl = baseArg || process.env.JUPYTER_BASE_URL;
const token = tokenArg ?? process.env.JUPYTER_TOKEN;
if (!baseUrl || token === undefined || !['v1', 'legacy', 'both', 'auto'].includes(modeArg)) {
	console.error('usage: node jupyter_services_run.mjs BASE_URL TOKEN [v1|legacy|both|auto]');
	process.exit(2);
}
const modes = modeArg === 'both' ? ['v1', 'legacy'] : [modeArg];

const WAIT_START_MS = 120000; // a kernel's sandbox on a loaded 2-core machine
const WAIT_EXEC_MS = 60000;
const INTERRUPT_MS = 2000;

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
function assert(cond, msg) {
	if (!cond)
		throw new Error(msg);
}
function within(ms, p, what) {
	let t;
	return Promise.race([
		p,
		new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
	]).finally(() => clearTimeout(t));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The WebSocket constructor handed to the library: the `ws` package's,
// offering only the subprotocols of the framing under test, and keeping
// every socket with the opcodes of the frames it received.
function socketClass(mode, sockets) {
	return class GavelTestSocket extends WS {
		constructor(url, protocols) {
			if (mode === 'v1')
				super(url, [V1]);
			else if (mode === 'legacy')
				super(url);
			else // auto: what the library asks for, unchanged
				super(url, protocols);
			const rec = { url: String(url), ws: this, text: 0, binary: 0, errors: [] };
			sockets.push(rec);
			this.on('message', (_data, isBinary) => { isBinary ? rec.binary++ : rec.text++; });
			this.on('error', (e) => { rec.errors.push(e.message); });
		}
	};
}

// Runs `code` and collects what it produced: the reply and every iopub
// message of this request, in order.
async function execute(kernel, code, ms = WAIT_EXEC_MS) {
	const iopub = [];
	const future = kernel.requestExecute({ code, stop_on_error: false });
	future.onIOPub = (msg) => { iopub.push(msg); };
	const reply = await within(ms, future.done, `execute ${JSON.stringify(code)}`);
	return { reply, iopub };
}
const ofType = (iopub, t) => iopub.filter((m) => m.header.msg_type === t);
function summary(r) {
	return JSON.stringify({
		reply: r.reply && r.reply.content,
		iopub: r.iopub.map((m) => [m.header.msg_type, m.content]),
	}).slice(0, 1500);
}

async function waitFor(cond, ms, what) {
	const t0 = Date.now();
	while (!(await cond())) {
		if (Date.now() - t0 > ms)
			throw new Error(`${what}: not within ${ms} ms`);
		await sleep(100);
	}
}

async function run(mode) {
	const sockets = [];
	const serverSettings = ServerConnection.makeSettings({
		baseUrl,
		wsUrl: process.env.JUPYTER_WS_URL || undefined,
		token,
		appendToken: true,
		WebSocket: socketClass(mode, sockets),
	});
	const tag = `[${mode}]`;
	let kernel = null;
	let kid = null;
	const km = new KernelManager({ serverSettings });

	await check(`${tag} GET api/kernelspecs: a default spec, python3 among them`, async () => {
		const specs = await within(30000, KernelSpecAPI.getSpecs(serverSettings), 'kernelspecs');
		assert(specs.default && specs.kernelspecs[specs.default], `no usable default: ${JSON.stringify(specs).slice(0, 400)}`);
		const py = specs.kernelspecs.python3;
		assert(py && py.language.toLowerCase() === 'python', `no python3 spec: ${Object.keys(specs.kernelspecs)}`);
		return `default ${specs.default}, ${Object.keys(specs.kernelspecs).length} spec(s)`;
	});

	const started = await check(`${tag} KernelManager.startNew: POST api/kernels, the WebSocket connects, kernel_info_reply`, async () => {
		await within(30000, km.ready, 'KernelManager ready');
		const t0 = Date.now();
		kernel = await within(WAIT_START_MS, km.startNew({ name: 'python3' }), 'startNew');
		kid = kernel.id;
		const info = await within(WAIT_START_MS, kernel.info, 'kernel_info').catch((e) => {
			const errs = [...new Set(sockets.flatMap((s) => s.errors))];
			throw new Error(`${e.message}; ${sockets.length} WebSocket(s) tried, errors: ${errs.join('; ') || 'none'}`);
		});
		assert(info.language_info && info.language_info.name === 'python', `kernel_info: ${JSON.stringify(info).slice(0, 400)}`);
		assert(/^5\./.test(info.protocol_version), `protocol_version ${info.protocol_version}`);
		const listed = await KernelAPI.listRunning(serverSettings);
		assert(listed.some((k) => k.id === kid), `GET api/kernels does not list ${kid}`);
		return `${Date.now() - t0} ms to kernel_info_reply, protocol ${info.protocol_version}`;
	});
	if (!started) {
		for (let i = 0; i < CHECKS - 2; i++)
			report(false, `${tag} (not run: no kernel)`);
		if (kid)
			await KernelAPI.shutdownKernel(kid, serverSettings).catch(() => {});
		km.dispose();
		return;
	}

	await check(`${tag} the channels WebSocket: framing ${{ v1: V1, legacy: 'legacy (no subprotocol)', auto: 'as negotiated' }[mode]} selected, ?token= and session_id in its URL`, async () => {
		// A message first, so that frames have arrived on this socket.
		await execute(kernel, 'pass');
		const live = sockets.filter((s) => s.ws.readyState === WS.OPEN);
		assert(live.length === 1, `${live.length} open sockets (${sockets.length} made)`);
		const s = live[0];
		const u = new URL(s.url);
		assert(u.pathname.endsWith(`/api/kernels/${kid}/channels`), `URL ${u.pathname}`);
		assert(u.searchParams.get('token') === token && u.searchParams.get('session_id'), `query ${u.search.replace(token, '<token>')}`);
		if (mode === 'auto') {
			return `selected '${s.ws.protocol}' after ${sockets.length} WebSocket(s); ${s.text} text, ${s.binary} binary frames`;
		} else if (mode === 'v1') {
			assert(s.ws.protocol === V1, `protocol selected: '${s.ws.protocol}'`);
			assert(s.binary > 0 && s.text === 0, `frames: ${s.text} text, ${s.binary} binary (v1 is binary only)`);
		} else {
			assert(s.ws.protocol === '', `protocol selected: '${s.ws.protocol}'`);
			assert(s.text > 0 && s.binary === 0, `frames: ${s.text} text, ${s.binary} binary (legacy JSON is text)`);
		}
		return `${s.text} text, ${s.binary} binary frames so far`;
	});

	await check(`${tag} print('hi'): stream stdout "hi\\n" on iopub, execute_reply ok`, async () => {
		const r = await execute(kernel, "print('hi')");
		const out = ofType(r.iopub, 'stream').filter((m) => m.content.name === 'stdout').map((m) => m.content.text).join('');
		assert(r.reply.content.status === 'ok' && out === 'hi\n', summary(r));
		const states = ofType(r.iopub, 'status').map((m) => m.content.execution_state);
		assert(states[0] === 'busy' && states[states.length - 1] === 'idle', `status: ${states}`);
		assert(ofType(r.iopub, 'execute_input').length === 1, summary(r));
	});

	await check(`${tag} 1+1: execute_result text/plain "2"`, async () => {
		const r = await execute(kernel, '1+1');
		const res = ofType(r.iopub, 'execute_result');
		assert(r.reply.content.status === 'ok' && res.length === 1 && res[0].content.data['text/plain'] === '2', summary(r));
		assert(res[0].content.execution_count === r.reply.content.execution_count, summary(r));
	});

	await check(`${tag} 1/0: execute_reply error and an iopub error, ename ZeroDivisionError`, async () => {
		const r = await execute(kernel, '1/0');
		const err = ofType(r.iopub, 'error');
		assert(r.reply.content.status === 'error' && r.reply.content.ename === 'ZeroDivisionError', summary(r));
		assert(err.length === 1 && err[0].content.ename === 'ZeroDivisionError' && err[0].content.traceback.length > 0, summary(r));
	});

	await check(`${tag} matplotlib plt.plot; plt.show(): display_data with image/png`, async () => {
		const r = await execute(kernel, 'import matplotlib.pyplot as plt; plt.plot([1,2,3]); plt.show()', 2 * WAIT_EXEC_MS);
		const disp = ofType(r.iopub, 'display_data').filter((m) => m.content.data['image/png']);
		assert(r.reply.content.status === 'ok' && disp.length === 1, summary(r));
		const png = Buffer.from(disp[0].content.data['image/png'], 'base64');
		assert(png.length > 1000 && png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
			`not a PNG: ${png.length} bytes`);
		return `${png.length} bytes of PNG`;
	});

	await check(`${tag} interrupt (POST api/kernels/{id}/interrupt) of time.sleep(60): KeyboardInterrupt within ${INTERRUPT_MS} ms`, async () => {
		const iopub = [];
		let replied = 0;
		let running = null;
		const busy = new Promise((r) => { running = r; });
		const future = kernel.requestExecute({ code: 'import time; time.sleep(60)' });
		future.onIOPub = (msg) => {
			iopub.push(msg);
			if (msg.header.msg_type === 'execute_input')
				running();
		};
		future.onReply = () => { replied = Date.now(); };
		await within(WAIT_EXEC_MS, busy, 'execute_input of the sleep');
		await sleep(300); // into time.sleep
		const t0 = Date.now();
		await within(30000, kernel.interrupt(), 'POST interrupt');
		const reply = await within(30000, future.done, 'execute_reply after the interrupt');
		const ms = (replied || Date.now()) - t0;
		console.log(`# ${tag} interrupt latency: ${ms} ms (POST interrupt to execute_reply)`);
		assert(reply.content.status === 'error' && reply.content.ename === 'KeyboardInterrupt',
			summary({ reply, iopub }));
		assert(ms <= INTERRUPT_MS, `took ${ms} ms`);
		const again = await execute(kernel, '1+1');
		assert(ofType(again.iopub, 'execute_result').length === 1, 'no answer after the interrupt: ' + summary(again));
		return `${ms} ms`;
	});

	await check(`${tag} restart (POST api/kernels/{id}/restart): same id, the kernel answers, x defined before is gone (NameError)`, async () => {
		const set = await execute(kernel, 'x = 41; x + 1');
		assert(ofType(set.iopub, 'execute_result')[0]?.content.data['text/plain'] === '42', summary(set));
		const t0 = Date.now();
		await within(WAIT_START_MS, kernel.restart(), 'restart');
		await waitFor(() => kernel.connectionStatus === 'connected' && kernel.status === 'idle', WAIT_START_MS, 'idle after the restart');
		const ms = Date.now() - t0;
		assert(kernel.id === kid, `id changed: ${kernel.id}`);
		const r = await execute(kernel, 'x');
		assert(r.reply.content.status === 'error' && r.reply.content.ename === 'NameError', summary(r));
		const ok = await execute(kernel, '1+1');
		assert(ofType(ok.iopub, 'execute_result')[0]?.content.data['text/plain'] === '2', summary(ok));
		return `${ms} ms to idle`;
	});

	await check(`${tag} the kernel model: GET api/kernels/{id} (id, name, execution_state, connections)`, async () => {
		const m = await KernelAPI.getKernelModel(kid, serverSettings);
		assert(m && m.id === kid && m.name === 'python3', JSON.stringify(m));
		assert(['idle', 'busy', 'starting'].includes(m.execution_state), JSON.stringify(m));
		assert(typeof m.connections === 'number' && m.connections >= 1, JSON.stringify(m));
		assert(typeof m.last_activity === 'string' && !Number.isNaN(Date.parse(m.last_activity)), JSON.stringify(m));
		return `state ${m.execution_state}, ${m.connections} connection(s)`;
	});

	await check(`${tag} shutdown (DELETE api/kernels/{id}): not listed, GET api/kernels/{id} 404, the WebSocket closed`, async () => {
		await within(60000, kernel.shutdown(), 'shutdown');
		const listed = await KernelAPI.listRunning(serverSettings);
		assert(!listed.some((k) => k.id === kid), `still listed: ${JSON.stringify(listed)}`);
		const m = await KernelAPI.getKernelModel(kid, serverSettings);
		assert(m === undefined, `GET after DELETE: ${JSON.stringify(m)}`);
		await waitFor(() => sockets.every((s) => s.ws.readyState === WS.CLOSED), 10000, 'sockets closed');
		kernel = null;
	});

	if (kernel)
		await kernel.shutdown().catch(() => {});
	km.dispose();
}

// The library logs its own notices (console.debug "Starting WebSocket",
// warnings); keep the output to our lines, their errors to stderr.
console.debug = () => {};
console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');
const log = console.log;
console.log = (...a) => {
	const s = a.join(' ');
	if (/^(ok|FAIL) \d+ |^# /.test(s))
		log(s);
	else
		process.stderr.write(s + '\n');
};

for (const mode of modes)
	await run(mode);
log(`# ${n - failed} of ${n} checks passed`);
process.exit(failed ? 1 : 0);

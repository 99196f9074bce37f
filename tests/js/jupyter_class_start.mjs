// A class opening its notebooks at once, through JupyterLab's own client
// library, @jupyterlab/services (pinned in package.json), unchanged: N
// KernelManager.startNew calls in parallel, each timed from the call to its
// kernel_info_reply on the channels WebSocket; then each runs `6*7` and
// is shut down (a student who looked and left: on judging slots, where a
// kernel holds a slot, the next start waits for it).
//
//   node jupyter_class_start.mjs BASE_URL TOKEN [N]
//
// BASE_URL and TOKEN as for jupyter_services_run.mjs (the token goes as
// `Authorization: token ...` on REST calls and `?token=` on the
// WebSocket). N defaults to 30. Prints `# start <i> <ms>` per kernel (or
// `# start <i> failed: why`) and one last line of JSON:
// {"n", "ok", "p50_ms", "p95_ms", "max_ms", "wrong", "startnew_p50_ms",
// "startnew_max_ms", "started_at_ms"} (wrong: kernels whose `6*7` did not
// give 42; startnew: the REST part, to startNew's answer, before the
// channels; started_at_ms: the wall clock at the start, to find the run
// in the daemons' logs). Exits non-zero when a start failed.
import WS from 'ws';
import { KernelManager, ServerConnection } from '@jupyterlab/services';

const [baseUrl, token, nArg = '30'] = process.argv.slice(2);
const N = Number(nArg);
if (!baseUrl || token === undefined || !(N > 0)) {
	console.error('usage: node jupyter_class_start.mjs BASE_URL TOKEN [N]');
	process.exit(2);
}
const WAIT_MS = 300000; // a class of kernels queued behind each other

function within(ms, p, what) {
	let t;
	return Promise.race([
		p,
		new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
	]).finally(() => clearTimeout(t));
}

const serverSettings = ServerConnection.makeSettings({ baseUrl, token, appendToken: true, WebSocket: WS });
const km = new KernelManager({ serverSettings });
await within(30000, km.ready, 'KernelManager ready');

async function one(i) {
	const t0 = Date.now();
	let kernel = null;
	try {
		kernel = await within(WAIT_MS, km.startNew({ name: 'python3' }), 'startNew');
		const restMs = Date.now() - t0;
		await within(WAIT_MS, kernel.info, 'kernel_info');
		const ms = Date.now() - t0;
		console.log(`# start ${i} ${ms} (startNew ${restMs}, id ${kernel.id})`);
		let answer = null;
		const future = kernel.requestExecute({ code: '6*7' });
		future.onIOPub = (msg) => {
			if (msg.header.msg_type === 'execute_result')
				answer = msg.content.data['text/plain'];
		};
		await within(60000, future.done, 'execute 6*7');
		await kernel.shutdown().catch(() => {});
		return { kernel: null, ms, restMs, right: answer === '42' };
	} catch (e) {
		console.log(`# start ${i} failed: ${e.message}`);
		return { kernel, ms: null, right: false };
	}
}

const startedAt = Date.now();
const runs = await Promise.all(Array.from({ length: N }, (_, i) => one(i)));
await Promise.all(runs.map((r) => (r.kernel ? r.kernel.shutdown().catch(() => {}) : null)));
km.dispose();

const sorted = (key) => runs.filter((r) => r.ms !== null).map((r) => r[key]).sort((a, b) => a - b);
const times = sorted('ms');
const restTimes = sorted('restMs');
const pctOf = (xs, p) => (xs.length ? xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] : null);
const pct = (p) => pctOf(times, p);
console.log(JSON.stringify({
	n: N,
	ok: times.length,
	p50_ms: pct(50),
	p95_ms: pct(95),
	max_ms: times.length ? times[times.length - 1] : null,
	startnew_p50_ms: pctOf(restTimes, 50),
	startnew_max_ms: pctOf(restTimes, 100),
	started_at_ms: startedAt,
	wrong: runs.filter((r) => r.ms !== null && !r.right).length,
}));
process.exit(times.length === N ? 0 : 1);

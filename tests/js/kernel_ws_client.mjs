// The WebSocket side of tests/integration/test_kernel_gateway_api.sh: the
// `ws` npm client against a kernel's channels, and a fake kernel played
// with redis-cli (it BLPOPs gavel:kin:<kid> and PUBLISHes on
// gavel:kout:<kid>, as the executor would). Prints one line per check,
// "PASS name" or "FAIL name: detail", for the shell test to turn into TAP.
// Environment: BASE (http://127.0.0.1:PORT), KEY_A, KEY_B, KID (a queued
// kernel of A's), KID2 (another), ROOT (the repository), and the Redis
// URL of the harness in GAVEL_REDIS_URL (tests/lib/redis.sh reads it).
import { spawnSync } from "node:child_process";
import WebSocket from "ws";

const { BASE, KEY_A, KEY_B, KID, KID2, ROOT } = process.env;
const WSBASE = BASE.replace(/^http/, "ws");
const V1 = "v1.kernel.websocket.jupyter.org";
let failed = 0;

function report(name, ok, detail = "") {
	if (ok) console.log(`PASS ${name}`);
	else {
		failed++;
		console.log(`FAIL ${name}: ${String(detail).slice(0, 400)}`);
	}
}

// redis-cli as the harness's user; input: the last argument from stdin
// (-x), binary-safe. Returns stdout as a Buffer.
function redis(args, input) {
	const r = spawnSync("bash", ["-c", '. tests/lib/redis.sh; redis_cli "$GAVEL_REDIS_URL" "$@"', "_",
		...(input !== undefined ? ["-x", ...args] : args)], { cwd: ROOT, input, maxBuffer: 64 << 20 });
	if (r.status !== 0) throw new Error(`redis-cli ${args[0]}: ${r.stderr}`);
	return r.stdout;
}

// The next element of kid's kin list (BLPOP, 10 s): a Buffer, or null.
function kin(kid) {
	const out = redis(["BLPOP", `gavel:kin:${kid}`, "10"]);
	const nl = out.indexOf(10);
	if (out.length === 0 || nl < 0) return null;
	return out.subarray(nl + 1, out.length - 1); // redis-cli ends it with \n
}

function kout(kid, buf) {
	return Number(String(redis(["PUBLISH", `gavel:kout:${kid}`], buf)).trim());
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A client that queues what it receives.
function open(kid, { protocols, query = `?token=${KEY_A}`, headers } = {}) {
	return new Promise((resolve) => {
		const ws = new WebSocket(`${WSBASE}/api/kernels/${kid}/channels${query}`, protocols, { headers });
		ws.inbox = [];
		ws.waiters = [];
		ws.closed = null;
		ws.on("message", (data, isBinary) => {
			const m = { data: Buffer.from(data), isBinary };
			const w = ws.waiters.shift();
			if (w) w(m);
			else ws.inbox.push(m);
		});
		ws.on("close", (code) => {
			ws.closed = code;
			for (const w of ws.waiters.splice(0)) w(null);
			if (ws.onclosed) ws.onclosed(code);
		});
		ws.on("open", () => resolve({ ws, status: 101 }));
		ws.on("unexpected-response", (req, res) => resolve({ ws: null, status: res.statusCode }));
		ws.on("error", (e) => resolve({ ws: null, status: -1, error: e }));
	});
}

function next(ws, ms = 5000) {
	if (ws.inbox.length) return Promise.resolve(ws.inbox.shift());
	return new Promise((resolve) => {
		const t = setTimeout(() => resolve(null), ms);
		ws.waiters.push((m) => {
			clearTimeout(t);
			resolve(m);
		});
	});
}

function closed(ws, ms = 10000) {
	if (ws.closed !== null) return Promise.resolve(ws.closed);
	return new Promise((resolve) => {
		const t = setTimeout(() => resolve(null), ms);
		ws.onclosed = (code) => {
			clearTimeout(t);
			resolve(code);
		};
	});
}

// A v1 message as @jupyterlab/services serializes it.
function v1(channel, parts) {
	const bufs = [Buffer.from(channel), ...parts.map((p) => Buffer.from(p))];
	const k = bufs.length + 1;
	const head = Buffer.alloc(8 * (k + 1));
	head.writeBigUInt64LE(BigInt(k), 0);
	let off = 8 * (k + 1);
	head.writeBigUInt64LE(BigInt(off), 8);
	bufs.forEach((b, i) => {
		off += b.length;
		head.writeBigUInt64LE(BigInt(off), 8 * (i + 2));
	});
	return Buffer.concat([head, ...bufs]);
}

// jupyter_server's serialize_binary_message: JSON then buffers.
function legacyBinary(obj, buffers) {
	const parts = [Buffer.from(JSON.stringify(obj)), ...buffers];
	const head = Buffer.alloc(4 * (parts.length + 1));
	head.writeUInt32BE(parts.length, 0);
	let off = head.length;
	parts.forEach((p, i) => {
		head.writeUInt32BE(off, 4 * (i + 1));
		off += p.length;
	});
	return Buffer.concat([head, ...parts]);
}

// Waits until the frontend (one worker) has subscribed to kid's kout.
async function subscribed(kid) {
	for (let i = 0; i < 100; i++) {
		const out = String(redis(["PUBSUB", "NUMSUB", `gavel:kout:${kid}`])).trim().split("\n");
		if (Number(out[1]) >= 1) return true;
		await sleep(50);
	}
	return false;
}

function msgElement(conn, payload) {
	return Buffer.concat([Buffer.from(`msg ${conn} ${payload.length}\n`), payload]);
}

try {
	redis(["DEL", `gavel:kin:${KID}`, `gavel:kin:${KID2}`]);

	// Three connections: v1 (?token=), legacy (Authorization: token), v1.
	const a = await open(KID, { protocols: [V1] });
	report("v1 upgrade with ?token= (101, subprotocol selected)", a.ws && a.ws.protocol === V1,
		`status ${a.status} protocol ${a.ws && a.ws.protocol}`);
	const openA = kin(KID);
	const mA = openA && /^open ([1-9][0-9]{0,17}) v1\n$/.exec(String(openA));
	report("kin: open <conn> v1", !!mA, String(openA));
	const connA = mA ? mA[1] : "0";

	const b = await open(KID, { query: "?cache=1", headers: { Authorization: `token ${KEY_A}` } });
	report("legacy upgrade with Authorization: token (no subprotocol)", b.ws && b.ws.protocol === "",
		`status ${b.status}`);
	const openB = kin(KID);
	const mB = openB && /^open ([1-9][0-9]{0,17}) json\n$/.exec(String(openB));
	report("kin: open <conn> json", !!mB, String(openB));
	const connB = mB ? mB[1] : "0";

	const c = await open(KID, { protocols: ["other", V1] });
	const openC = kin(KID);
	const mC = openC && /^open ([1-9][0-9]{0,17}) v1\n$/.exec(String(openC));
	report("a second v1 connection: its own connection id", c.ws && mC && mC[1] !== connA, String(openC));
	const connC = mC ? mC[1] : "0";

	// Client -> kernel.
	const execReq = v1("shell", ['{"msg_id":"1","msg_type":"execute_request"}', "{}", "{}", '{"code":"1+1"}']);
	a.ws.send(execReq);
	const e1 = kin(KID);
	report("a v1 message arrives as msg <conn> <len> and its bytes", e1 && e1.equals(msgElement(connA, execReq)),
		e1 && e1.subarray(0, 60).toString("hex"));
	const text = JSON.stringify({ channel: "shell", header: { msg_id: "2" }, content: { code: "é" } });
	b.ws.send(text);
	const e2 = kin(KID);
	report("a legacy text message arrives as its text", e2 && e2.equals(msgElement(connB, Buffer.from(text))),
		String(e2));
	const bin = legacyBinary({ channel: "shell", header: { msg_id: "3" } }, [Buffer.from([0, 1, 2, 255])]);
	b.ws.send(bin);
	const e3 = kin(KID);
	report("a legacy binary message arrives behind one \\x00 byte",
		e3 && e3.equals(msgElement(connB, Buffer.concat([Buffer.from([0]), bin]))),
		e3 && e3.subarray(0, 40).toString("hex"));

	// Kernel -> clients.
	report("the frontend subscribed to gavel:kout:<kid>", await subscribed(KID));
	const only = v1("shell", ['{"msg_id":"r1"}', "{}", "{}", '{"status":"ok"}']);
	kout(KID, Buffer.concat([Buffer.from(`msg ${connA} v1 binary shell ${only.length}\n`), only]));
	const all = v1("iopub", ['{"msg_id":"s1"}', "{}", "{}", '{"execution_state":"busy"}']);
	kout(KID, Buffer.concat([Buffer.from(`msg 0 v1 binary iopub ${all.length}\n`), all]));
	const jtext = JSON.stringify({ channel: "iopub", header: { msg_id: "s2" }, content: { execution_state: "idle" } });
	kout(KID, Buffer.from(`msg 0 json text iopub ${Buffer.byteLength(jtext)}\n${jtext}`));
	const ra1 = await next(a.ws), ra2 = await next(a.ws);
	report("msg <conn> reaches its own connection (binary)", ra1 && ra1.isBinary && ra1.data.equals(only));
	report("msg 0 v1 reaches the first v1 connection", ra2 && ra2.isBinary && ra2.data.equals(all));
	const rc1 = await next(c.ws);
	report("msg 0 v1 reaches the second v1 connection, which did not get A's own",
		rc1 && rc1.data.equals(all), rc1 && rc1.data.subarray(0, 40).toString("hex"));
	const rb1 = await next(b.ws);
	report("the legacy connection gets only the json message, as text",
		rb1 && !rb1.isBinary && rb1.data.toString() === jtext, rb1 && rb1.data.toString());

	// Refusals.
	b.ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false });
	report("invalid UTF-8 in a text message: closed with 1007", (await closed(b.ws)) === 1007, b.ws.closed);
	const cl = kin(KID);
	report("kin: close <conn> after the client is gone", cl && String(cl) === `close ${connB}\n`, String(cl));
	c.ws.send(Buffer.alloc(10 * 1024 * 1024 + 1, 1));
	report("a message over 10 MiB: closed with 1009", (await closed(c.ws, 20000)) === 1009, c.ws.closed);
	const cl2 = kin(KID);
	report("kin: close of the second v1 connection", cl2 && String(cl2) === `close ${connC}\n`, String(cl2));
	const bad = Buffer.from(execReq);
	bad.writeBigUInt64LE(9n, 0);
	const d = await open(KID, { protocols: [V1] });
	kin(KID);
	d.ws.send(bad);
	report("a v1 message with bad offsets: closed with 1008", (await closed(d.ws)) === 1008, d.ws.closed);
	kin(KID);

	const other = await open(KID, { query: `?token=${KEY_B}`, protocols: [V1] });
	report("another tenant's key: 404 before any upgrade", other.status === 404, other.status);
	const none = await open("00000000-0000-4000-8000-000000000000", { protocols: [V1] });
	report("an unknown kernel: 404", none.status === 404, none.status);
	const nokey = await open(KID, { query: "", protocols: [V1] });
	report("no key: 401", nokey.status === 401, nokey.status);

	// A running kernel (its model in Redis: a queued one's WebSocket is
	// held unread) whose input list is full (nobody reads it): 1008. Full
	// is GV_KIN_ELEMENTS_MAX (common/kernel_inbox.h) elements.
	redis(["HSET", `gavel:kstate:${KID2}`, "execution_state", "idle", "connections", "0"]);
	const e = await open(KID2, { protocols: [V1] });
	kin(KID2);
	const fill = [];
	for (let i = 0; i < 4096; i++) fill.push("x");
	redis(["RPUSH", `gavel:kin:${KID2}`, ...fill]);
	e.ws.send(execReq);
	report("a full kin list: closed with 1008", (await closed(e.ws)) === 1008, e.ws.closed);
	// The model first: the close that follows is then for an ended kernel
	// and dropped, not left for the shell's checks of K2's list.
	redis(["DEL", `gavel:kstate:${KID2}`]);
	redis(["DEL", `gavel:kin:${KID2}`]);

	// The kernel ends: every connection closes with 1000.
	kout(KID, Buffer.from("gone client\n"));
	report("gone: the WebSocket closes with 1000", (await closed(a.ws)) === 1000, a.ws.closed);
} catch (e) {
	report("no exception", false, e.stack);
}
process.exit(failed ? 1 : 0);

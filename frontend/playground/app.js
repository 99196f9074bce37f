// Gavel's playground page: pick a language, edit code, give stdin, run,
// and watch the submission go from queued to its verdict; #id=<id> opens a
// submission's result by id. Plain JavaScript, no framework, no build step.
//
// Every URL is relative to the page, so the page works under whichever
// path serves it (/playground/{tenant}/): the API it calls is the native
// one there (v1/languages, v1/submissions, v1/submissions/{id}[/events]).
// The progress stream is read with fetch rather than EventSource, because
// an EventSource cannot send the Authorization header a key-protected
// playground needs; where the stream fails or ends early the page polls
// GET v1/submissions/{id} instead.
//
// Program output, compiler messages and error texts are hostile: they only
// ever reach the page as text (textContent, Option labels), never as
// markup.
'use strict';

(() => {
	const $ = (id) => document.getElementById(id);
	const ui = {
		form: $('run-form'),
		language: $('language'),
		run: $('run'),
		code: $('code'),
		stdin: $('stdin'),
		keyBox: $('key-box'),
		key: $('api-key'),
		forgetKey: $('forget-key'),
		where: $('where'),
		result: $('result'),
		status: $('status'),
		facts: $('facts'),
		verdict: $('verdict'),
		verdictName: $('verdict-name'),
		time: $('time'),
		wall: $('wall'),
		memory: $('memory'),
		exit: $('exit'),
		resultLanguage: $('result-language'),
		messageLine: $('message-line'),
		message: $('message'),
		permalinkLine: $('permalink-line'),
		permalink: $('permalink'),
		outStdout: $('out-stdout'),
		stdout: $('stdout'),
		outStderr: $('out-stderr'),
		stderr: $('stderr'),
		outCompile: $('out-compile'),
		compileOutput: $('compile-output'),
	};

	// Storage is per origin; a key belongs to one playground path.
	const KEY_STORE = 'gavel.playground.key:' + location.pathname;
	const LANG_STORE = 'gavel.playground.language:' + location.pathname;
	const SHOW_MAX = 1 << 20; // characters of one output shown
	const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
	const FINAL = new Set(['done', 'failed', 'cancelled']);

	const VERDICTS = {
		AC: 'ran and exited normally',
		WA: 'wrong answer',
		PE: 'presentation error',
		TLE: 'time limit exceeded',
		MLE: 'memory limit exceeded',
		OLE: 'output limit exceeded',
		RE: 'runtime error',
		CE: 'compilation error',
		IE: 'internal error (the judge failed, not the program)',
	};

	const TEMPLATES = {
		c: '#include <stdio.h>\n\nint main(void)\n{\n\tchar name[100];\n' +
			'\tif (scanf("%99s", name) == 1)\n\t\tprintf("Hello, %s!\\n", name);\n\treturn 0;\n}\n',
		cpp: '#include <iostream>\n#include <string>\n\nint main()\n{\n\tstd::string name;\n' +
			'\tif (std::cin >> name)\n\t\tstd::cout << "Hello, " << name << "!\\n";\n}\n',
		python3: 'name = input()\nprint(f"Hello, {name}!")\n',
		javascript: 'const name = require("fs").readFileSync(0, "utf8").trim();\n' +
			'console.log(`Hello, ${name}!`);\n',
		java: 'import java.util.Scanner;\n\npublic class Main {\n\tpublic static void main(String[] args) {\n' +
			'\t\tString name = new Scanner(System.in).next();\n' +
			'\t\tSystem.out.println("Hello, " + name + "!");\n\t}\n}\n',
		go: 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar name string\n\tfmt.Scan(&name)\n' +
			'\tfmt.Printf("Hello, %s!\\n", name)\n}\n',
		rust: 'use std::io::Read;\n\nfn main() {\n\tlet mut name = String::new();\n' +
			'\tstd::io::stdin().read_to_string(&mut name).unwrap();\n' +
			'\tprintln!("Hello, {}!", name.trim());\n}\n',
		pascal: 'program hello;\nvar name: string;\nbegin\n\treadln(name);\n' +
			'\twriteln(\'Hello, \', name, \'!\');\nend.\n',
	};
	TEMPLATES.cpp14 = TEMPLATES.cpp;
	TEMPLATES.cpp20 = TEMPLATES.cpp;

	let languages = new Map(); // id -> the language's JSON
	let shownLanguage = '';    // the language whose template the editor may hold
	let current = null;        // AbortController of the run or load in progress
	let shownId = '';          // the submission on the page

	class ApiError extends Error {
		constructor(status, code, message) {
			super(message);
			this.status = status;
			this.code = code;
		}
	}

	const isAbort = (e) => e && e.name === 'AbortError';

	// ---- storage (a browser may refuse it: the page works without) ----

	function stored(store, name) {
		try {
			return store.getItem(name) || '';
		} catch {
			return '';
		}
	}

	function store(storeObj, name, value) {
		try {
			if (value)
				storeObj.setItem(name, value);
			else
				storeObj.removeItem(name);
		} catch {
			// private mode or storage off: nothing to keep
		}
	}

	const apiKey = () => ui.key.value.trim();

	// ---- the API ----

	function headers(extra) {
		const h = Object.assign({}, extra);
		const key = apiKey();
		if (key)
			h.Authorization = 'Bearer ' + key;
		return h;
	}

	async function errorOf(res) {
		let code = 'http_' + res.status;
		let message = 'HTTP ' + res.status;
		try {
			const body = await res.json();
			if (body && body.error) {
				code = String(body.error.code || code);
				message = String(body.error.message || message);
			}
		} catch {
			// not JSON: keep the status line
		}
		return new ApiError(res.status, code, message);
	}

	async function api(method, url, body, signal) {
		const init = {
			method,
			headers: headers({ Accept: 'application/json' }),
			cache: 'no-store',
			credentials: 'omit',
			signal,
		};
		if (body !== undefined) {
			init.headers['Content-Type'] = 'application/json';
			init.body = JSON.stringify(body);
		}
		const res = await fetch(url, init);
		if (!res.ok)
			throw await errorOf(res);
		return res.json();
	}

	const submissionUrl = (id) => 'v1/submissions/' + encodeURIComponent(id);

	// Reads the submission's event stream; calls onProgress for each
	// progress event. Resolves to the submission when "done" arrives, to
	// null when the stream ends without it. Throws ApiError for an answer
	// that is not a stream, TypeError and the like when the network fails.
	async function streamEvents(id, signal, onProgress) {
		const res = await fetch(submissionUrl(id) + '/events', {
			headers: headers({ Accept: 'text/event-stream' }),
			cache: 'no-store',
			credentials: 'omit',
			signal,
		});
		if (!res.ok)
			throw await errorOf(res);
		const type = res.headers.get('Content-Type') || '';
		if (!type.startsWith('text/event-stream') || !res.body)
			throw new TypeError('the event stream is not a stream');
		const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
		let buf = '';
		let event = 'message';
		let data = [];
		for (;;) {
			const { value, done } = await reader.read();
			if (done)
				return null;
			buf += value;
			let nl;
			while ((nl = buf.indexOf('\n')) >= 0) {
				let line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				if (line.endsWith('\r'))
					line = line.slice(0, -1);
				if (line === '') {
					if (data.length) {
						const payload = data.join('\n');
						if (event === 'done') {
							reader.cancel().catch(() => {});
							return JSON.parse(payload);
						}
						let p = {};
						try {
							p = JSON.parse(payload);
						} catch {
							// a progress event we cannot read: the name is enough
						}
						onProgress(event, p);
					}
					event = 'message';
					data = [];
				} else if (line.startsWith(':')) {
					// a comment: the server's keep-alive ping
				} else {
					const colon = line.indexOf(':');
					const field = colon < 0 ? line : line.slice(0, colon);
					let v = colon < 0 ? '' : line.slice(colon + 1);
					if (v.startsWith(' '))
						v = v.slice(1);
					if (field === 'event')
						event = v;
					else if (field === 'data')
						data.push(v);
				}
			}
		}
	}

	function sleep(ms, signal) {
		return new Promise((resolve, reject) => {
			const t = setTimeout(resolve, ms);
			signal.addEventListener('abort', () => {
				clearTimeout(t);
				reject(new DOMException('aborted', 'AbortError'));
			}, { once: true });
		});
	}

	async function poll(id, signal) {
		let delay = 500;
		for (;;) {
			const sub = await api('GET', submissionUrl(id), undefined, signal);
			if (FINAL.has(sub.status))
				return sub;
			progress(sub.status, {});
			await sleep(delay, signal);
			delay = Math.min(delay * 1.5, 3000);
		}
	}

	// Follows submission id to its end: the stream first, polling when the
	// stream cannot be had or ends before the result.
	async function follow(id, signal) {
		let sub = null;
		try {
			sub = await streamEvents(id, signal, progress);
		} catch (e) {
			if (isAbort(e) || (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 429))
				throw e;
		}
		if (!sub)
			sub = await poll(id, signal);
		showSubmission(sub);
	}

	// ---- what the page shows ----

	function setStatus(state, text) {
		ui.status.dataset.state = state;
		ui.status.textContent = text;
		ui.result.setAttribute('aria-busy', FINAL.has(state) || state === 'idle' || state === 'error' ? 'false' : 'true');
	}

	function progress(event, p) {
		switch (event) {
		case 'queued':
			setStatus('queued', 'Queued…');
			break;
		case 'compiling':
			setStatus('compiling', 'Compiling…');
			break;
		case 'running':
			setStatus('running', p && p.of > 1 ? `Running test ${p.test} of ${p.of}…` : 'Running…');
			break;
		default:
			break;
		}
	}

	function showError(e) {
		let text = e instanceof ApiError ? e.message : 'The server could not be reached: ' + String(e.message || e);
		if (e instanceof ApiError && e.status === 401) {
			text = 'This playground needs an API key (' + e.message + '). Enter one under "API key".';
			ui.keyBox.open = true;
		} else if (e instanceof ApiError && e.status === 404 && shownId) {
			text = 'No submission ' + shownId + ' here.';
		}
		setStatus('error', text);
	}

	// Text only: hostile bytes stay text. Very long outputs are cut for
	// the page's sake (the API has them whole).
	function setOutput(box, pre, text) {
		if (typeof text !== 'string') {
			box.hidden = true;
			pre.textContent = '';
			return;
		}
		box.hidden = false;
		pre.textContent = text.length > SHOW_MAX
			? text.slice(0, SHOW_MAX) + `\n… (${text.length - SHOW_MAX} more characters not shown)`
			: text;
	}

	function formatMemory(kb) {
		if (typeof kb !== 'number')
			return '';
		return kb >= 1024 ? (kb / 1024).toFixed(1) + ' MiB' : kb + ' KiB';
	}

	function clearResult() {
		ui.facts.hidden = true;
		ui.messageLine.hidden = true;
		ui.permalinkLine.hidden = true;
		for (const [box, pre] of [[ui.outStdout, ui.stdout], [ui.outStderr, ui.stderr],
			[ui.outCompile, ui.compileOutput]])
			setOutput(box, pre, undefined);
		ui.verdict.textContent = '';
		delete ui.verdict.dataset.verdict;
	}

	function showPermalink(id) {
		shownId = id;
		const href = '#id=' + id;
		ui.permalink.href = href;
		ui.permalink.textContent = new URL(href, location.href).href;
		ui.permalinkLine.hidden = false;
	}

	function showSubmission(sub) {
		const r = sub.result || {};
		const verdict = sub.verdict || r.verdict || '';
		ui.resultLanguage.textContent = languages.has(sub.language)
			? languages.get(sub.language).name : String(sub.language || '');
		if (sub.status === 'cancelled') {
			setStatus('cancelled', 'Cancelled.');
		} else if (sub.status === 'failed') {
			setStatus('failed', 'The judge could not finish this run.');
		} else if (!FINAL.has(sub.status)) {
			progress(sub.status, {});
			return;
		} else {
			setStatus('done', 'Done: ' + (verdict || 'no verdict') + '.');
		}
		ui.verdict.textContent = verdict || '—';
		ui.verdict.dataset.verdict = verdict;
		ui.verdictName.textContent = VERDICTS[verdict] ? '(' + VERDICTS[verdict] + ')' : '';
		ui.time.textContent = typeof r.time_ms === 'number' ? r.time_ms + ' ms' : '';
		ui.wall.textContent = typeof r.wall_ms === 'number' ? r.wall_ms + ' ms' : '';
		ui.memory.textContent = formatMemory(r.memory_kb);
		ui.exit.textContent = r.signal ? 'killed by signal ' + r.signal
			: typeof r.exit_code === 'number' ? String(r.exit_code) : '';
		ui.facts.hidden = false;
		ui.message.textContent = r.message || '';
		ui.messageLine.hidden = !r.message;
		setOutput(ui.outStdout, ui.stdout, typeof r.stdout === 'string' ? r.stdout : undefined);
		setOutput(ui.outStderr, ui.stderr, r.stderr ? r.stderr : undefined);
		setOutput(ui.outCompile, ui.compileOutput, r.compile_output ? r.compile_output : undefined);
	}

	// ---- running and opening ----

	function begin() {
		if (current)
			current.abort();
		current = new AbortController();
		return current;
	}

	async function run() {
		const lang = ui.language.value;
		if (!lang || ui.run.disabled) {
			if (!lang)
				setStatus('error', 'Pick a language first.');
			return;
		}
		const ctl = begin();
		clearResult();
		shownId = '';
		setStatus('submitting', 'Submitting…');
		ui.run.disabled = true;
		const def = languages.get(lang);
		try {
			const created = await api('POST', 'v1/submissions', {
				language: lang,
				files: [{ name: def && def.source_file ? def.source_file : 'main', content: ui.code.value }],
				stdin: ui.stdin.value,
				return_output: true,
			}, ctl.signal);
			if (!ID_RE.test(String(created.id)))
				throw new ApiError(0, 'bad_id', 'the server answered an id the page cannot use');
			history.pushState(null, '', '#id=' + created.id);
			showPermalink(created.id);
			progress(created.status || 'queued', {});
			ui.run.disabled = false;
			await follow(created.id, ctl.signal);
		} catch (e) {
			if (!isAbort(e))
				showError(e);
		} finally {
			if (current === ctl)
				current = null;
			// Disabled only while the POST was in flight, however it ended
			// (a permalink opened meanwhile aborts it).
			ui.run.disabled = !ui.language.value;
		}
	}

	function idFromHash() {
		const id = new URLSearchParams(location.hash.slice(1)).get('id') || '';
		return ID_RE.test(id) ? id : '';
	}

	async function openFromHash() {
		const id = idFromHash();
		if (id === shownId)
			return;
		if (!id) { // back to the page without a run
			if (current)
				current.abort();
			current = null;
			shownId = '';
			clearResult();
			setStatus('idle', 'Nothing run yet.');
			return;
		}
		const ctl = begin();
		clearResult();
		showPermalink(id);
		setStatus('loading', 'Loading submission ' + id + '…');
		try {
			const sub = await api('GET', submissionUrl(id), undefined, ctl.signal);
			if (languages.has(sub.language) && ui.language.value !== sub.language) {
				ui.language.value = sub.language;
				shownLanguage = sub.language;
			}
			showSubmission(sub);
			if (!FINAL.has(sub.status))
				await follow(id, ctl.signal);
		} catch (e) {
			if (!isAbort(e))
				showError(e);
		} finally {
			if (current === ctl)
				current = null;
		}
	}

	// ---- languages ----

	function useTemplate(id) {
		const prev = TEMPLATES[shownLanguage] || '';
		if (ui.code.value === '' || ui.code.value === prev)
			ui.code.value = TEMPLATES[id] || '';
		shownLanguage = id;
	}

	async function loadLanguages() {
		let list;
		try {
			list = await api('GET', 'v1/languages');
		} catch (e) {
			setStatus('error', 'Could not load the languages: ' + (e.message || String(e)));
			ui.language.options[0].textContent = 'No languages';
			return;
		}
		ui.language.textContent = '';
		languages = new Map();
		for (const l of Array.isArray(list) ? list : []) {
			if (!l || typeof l.id !== 'string')
				continue;
			languages.set(l.id, l);
			const label = String(l.name || l.id) + (l.display_version ? ' — ' + l.display_version : '') +
				(l.available ? '' : ' (unavailable)');
			const opt = new Option(label, l.id);
			opt.disabled = !l.available;
			ui.language.add(opt);
		}
		const usable = [...languages.values()].filter((l) => l.available).map((l) => l.id);
		const want = [stored(localStorage, LANG_STORE), 'python3', usable[0]].find((id) => usable.includes(id));
		ui.language.disabled = usable.length === 0;
		ui.run.disabled = usable.length === 0;
		if (!want) {
			setStatus('error', 'No language is available right now (no executor offers one).');
			return;
		}
		ui.language.value = want;
		useTemplate(want);
	}

	// ---- the editor: Tab indents; Esc then Tab leaves ----

	let escaped = false;

	function insertText(text) {
		// execCommand keeps the browser's undo history; setRangeText is the
		// fallback where it is gone.
		if (!(document.execCommand && document.execCommand('insertText', false, text)))
			ui.code.setRangeText(text, ui.code.selectionStart, ui.code.selectionEnd, 'end');
	}

	function indentLines(outdent) {
		const ta = ui.code;
		const v = ta.value;
		const start = v.lastIndexOf('\n', ta.selectionStart - 1) + 1;
		let end = ta.selectionEnd;
		if (end > start && v[end - 1] === '\n')
			end--;
		const lineEnd = v.indexOf('\n', end);
		const stop = lineEnd < 0 ? v.length : lineEnd;
		const lines = v.slice(start, stop).split('\n');
		const changed = lines.map((l) => (outdent ? l.replace(/^(\t| {1,4})/, '') : '\t' + l)).join('\n');
		ta.setSelectionRange(start, stop);
		insertText(changed);
		ta.setSelectionRange(start, start + changed.length);
	}

	function onEditorKey(e) {
		if (e.key === 'Escape') {
			escaped = true;
			return;
		}
		if (e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) {
			if (escaped) {
				escaped = false; // let the browser move the focus
				return;
			}
			e.preventDefault();
			const ta = ui.code;
			const multiLine = ta.value.slice(ta.selectionStart, ta.selectionEnd).includes('\n');
			if (e.shiftKey || multiLine)
				indentLines(e.shiftKey);
			else
				insertText('\t');
			return;
		}
		escaped = false;
	}

	// ---- wiring ----

	function start() {
		const segs = location.pathname.split('/').filter(Boolean);
		if (segs.length >= 2 && segs[segs.length - 2] === 'playground')
			ui.where.textContent = 'Playground of ' + segs[segs.length - 1];

		ui.key.value = stored(sessionStorage, KEY_STORE);
		if (ui.key.value)
			ui.keyBox.open = true;
		ui.key.addEventListener('input', () => store(sessionStorage, KEY_STORE, apiKey()));
		ui.forgetKey.addEventListener('click', () => {
			ui.key.value = '';
			store(sessionStorage, KEY_STORE, '');
			ui.key.focus();
		});

		ui.code.addEventListener('keydown', onEditorKey);
		ui.code.addEventListener('blur', () => {
			escaped = false;
		});
		ui.language.addEventListener('change', () => {
			store(localStorage, LANG_STORE, ui.language.value);
			useTemplate(ui.language.value);
		});
		ui.form.addEventListener('submit', (e) => {
			e.preventDefault();
			run();
		});
		document.addEventListener('keydown', (e) => {
			if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
				e.preventDefault();
				run();
			}
		});
		window.addEventListener('hashchange', openFromHash);
		window.addEventListener('popstate', openFromHash);

		loadLanguages().then(openFromHash);
	}

	start();
})();

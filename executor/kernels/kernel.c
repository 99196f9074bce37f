/* One notebook kernel (executor/kernels/kernel.h): the sandbox, the relay
 * between it and Redis, and the ends. */
#include "executor/kernels/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/kernel_inbox.h"
#include "common/io.h"
#include "common/kernel_wire.h"
#include "common/queue.h"
#include "executor/kernels/bridge_proto.h"
#include "executor/kernels/kernel_internal.h"
#include "executor/sandbox/session.h"
#include "executor/sandbox/session_stream.h"

#define BRIDGE_FILE "bridge.py"
#define BRIDGE_MAX (1u << 20)
#define PYTHON "/usr/bin/python3"
#define KERNEL_PROCS 256          /* threads count too (gVisor's RLIMIT_NPROC) */
#define KERNEL_OPEN_FILES 1024
#define KERNEL_FSIZE_KB (1u << 20)
/* init samples a kernel every second (its process tree every 4 s), not
 * every 5 ms: a kernel idles for hours, and each wake-up of init costs CPU
 * under gVisor (13 % of a core per idle kernel measured at 5 ms, 0.24 % at
 * 250 ms, 0.12 % at 1 s: test_kernel_image's sandboxes over two minutes).
 * Its limits are the lifetime and the cgroup's memory, not tight ones. */
#define KERNEL_SAMPLE_MS 1000
#define BLPOP_TIMEOUT_S "5"
#define STATE_TTL_MS "60000"
#define STATE_REFRESH_MS 10000
#define CONN_SILENT_MS 120000     /* a connection not pinged this long is gone */
/* Output the host takes from one kernel: a token bucket (back-pressure,
 * never drops). */
#define OUT_RATE_BPS (32u << 20)
#define OUT_BURST_B (16u << 20)

struct kconn {
	uint64_t id;
	enum kernel_framing framing;
	int64_t seen_ms;
};

struct kernel {
	const struct exec_kernel_env *env;
	const struct exec_kernel_spec *spec;
	struct exec_kernel_outcome *out;
	char kin[GV_QUEUE_KEY_MAX], kout[GV_QUEUE_KEY_MAX], kstate[GV_QUEUE_KEY_MAX];
	const char *bridge; /* borrowed from env */
	size_t bridge_len;
	struct exec_session *s;
	struct exec_stream *st;
	struct kernel_out_decoder dec;
	struct kconn conns[EXEC_KERNEL_CONNS_MAX];
	size_t n_conns;
	bool blpop_sent;
	bool ready_seen;     /* the current sandbox answered */
	bool restarting;     /* a restart waits for the new sandbox's `ready` */
	/* The sandbox is a clone of the node's image that has not answered
	 * yet: if it ends now, a fresh one takes its place. */
	bool clone_unproven;
	bool ended;
	char state[12];
	int64_t t0, last_activity, next_refresh;
	int64_t sandbox_t0;
	uint64_t cpu_ms_done; /* CPU of the sandboxes already closed */
	int64_t next_redis_warn;
	double tokens;        /* output budget, bytes */
	int64_t tokens_at;
};

void exec_kernel_announce_end(struct gv_redis *r, const char *kid, const char *reason)
{
	char ch[GV_QUEUE_KEY_MAX], msg[48];
	snprintf(ch, sizeof(ch), GV_QUEUE_KOUT_PREFIX "%s", kid);
	int n = snprintf(msg, sizeof(msg), "gone %s\n", reason);
	const char *a[] = {"PUBLISH", ch, msg};
	size_t l[] = {7, strlen(ch), (size_t)n};
	struct gv_err err;
	gv_redis_reply_free(gv_redis_commandv(r, 3, a, l, &err));
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void kernel_end(struct kernel *k, const char *reason, const char *message)
{
	if (k->ended)
		return;
	k->ended = true;
	snprintf(k->out->reason, sizeof(k->out->reason), "%s", reason);
	snprintf(k->out->message, sizeof(k->out->message), "%.255s", message ? message : "");
}

/* ---- Redis ---- */

static void redis_cmd(struct kernel *k, int argc, const char **argv, const size_t *lens)
{
	struct gv_err err;
	redisReply *rep = gv_redis_commandv(k->env->r, argc, argv, lens, &err);
	if (!rep)
		gv_warn(k->env->log, "kernel %s: redis %s: %s", k->spec->kid, argv[0], err.msg);
	gv_redis_reply_free(rep);
}

static void publish(struct kernel *k, const char *msg, size_t len)
{
	const char *a[] = {"PUBLISH", k->kout, msg};
	size_t l[] = {7, strlen(k->kout), len};
	redis_cmd(k, 3, a, l);
}

/* The model's fields in gavel:kstate:<kid>, and its expiry. */
static void state_write(struct kernel *k)
{
	char act[24], conns[16], started[24];
	snprintf(act, sizeof(act), "%" PRId64, wall_ms() - (mono_ms() - k->last_activity));
	snprintf(conns, sizeof(conns), "%zu", k->n_conns);
	snprintf(started, sizeof(started), "%" PRId64, wall_ms() - (mono_ms() - k->t0));
	const char *a[] = {"HSET", k->kstate, "node", k->env->node, "execution_state", k->state,
			   "last_activity_ms", act, "connections", conns, "started_ms", started};
	size_t l[13];
	for (int i = 0; i < 12; i++)
		l[i] = strlen(a[i]);
	redis_cmd(k, 12, a, l);
	const char *b[] = {"PEXPIRE", k->kstate, STATE_TTL_MS};
	size_t bl[] = {7, strlen(k->kstate), strlen(STATE_TTL_MS)};
	redis_cmd(k, 3, b, bl);
	k->next_refresh = mono_ms() + STATE_REFRESH_MS;
}

static void say_state(struct kernel *k)
{
	char msg[32];
	int n = snprintf(msg, sizeof(msg), "state %s\n", k->state);
	publish(k, msg, (size_t)n);
}

static void set_state(struct kernel *k, const char *state)
{
	if (!strcmp(k->state, state))
		return;
	snprintf(k->state, sizeof(k->state), "%s", state);
	say_state(k);
	state_write(k);
}

/* Sends BLPOP on the command connection without waiting for it. */
static int blpop_send(struct kernel *k, struct gv_err *err)
{
	if (k->blpop_sent)
		return 0;
	if (gv_redis_ensure(k->env->rin, err) != 0)
		return -1;
	redisContext *c = gv_redis_context(k->env->rin);
	const char *a[] = {"BLPOP", k->kin, BLPOP_TIMEOUT_S};
	size_t l[] = {5, strlen(k->kin), strlen(BLPOP_TIMEOUT_S)};
	if (redisAppendCommandArgv(c, 3, a, l) != REDIS_OK)
		return gv_err_set(err, GV_EREDIS, "BLPOP: %s", c->errstr);
	int done = 0;
	while (!done)
		if (redisBufferWrite(c, &done) != REDIS_OK)
			return gv_err_set(err, GV_EREDIS, "BLPOP: %s", c->errstr);
	k->blpop_sent = true;
	return 0;
}

/* ---- the sandbox ---- */

/* The bridge's source, read from the host (sent into each sandbox as a
 * job file). */
char *exec_kernel_bridge_load(const char *path, size_t *len, struct gv_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		gv_err_errno(err, "open %s", path);
		return NULL;
	}
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > BRIDGE_MAX) {
		gv_err_set(err, GV_EINVAL, "%s: not a regular file of at most %u bytes", path, BRIDGE_MAX);
	} else if ((buf = malloc((size_t)st.st_size)) == NULL) {
		gv_err_set(err, ENOMEM, "bridge: out of memory");
	} else if (gv_read_upto(fd, buf, (size_t)st.st_size) != (size_t)st.st_size) {
		gv_err_errno(err, "read %s", path);
		free(buf);
		buf = NULL;
	} else {
		*len = (size_t)st.st_size;
	}
	close(fd);
	return buf;
}

static int load_bridge(struct kernel *k, struct gv_err *err)
{
	if (!k->env->bridge)
		return gv_err_set(err, GV_ECONFIG, "the kernel bridge could not be read when the worker started");
	k->bridge = k->env->bridge;
	k->bridge_len = k->env->bridge_len;
	return 0;
}

void exec_kernel_sandbox_job(struct exec_kernel_sandbox_job *kj, const char *bridge, size_t bridge_len,
			     const struct exec_kernel_spec *spec, uint64_t wall_ms)
{
	memset(kj, 0, sizeof(*kj));
	kj->argv[0] = PYTHON;
	kj->argv[1] = "-I";
	kj->argv[2] = "/box/" BRIDGE_FILE;
	kj->files[0] = (struct exec_file){.name = BRIDGE_FILE, .data = bridge, .len = bridge_len};
	kj->job = (struct exec_job){
		.tenant = spec->tenant,
		.interactive = true,
		.run_argv = kj->argv,
		.files = kj->files,
		.n_files = 1,
		.run_limits = {.cpu_ms = wall_ms, .wall_ms = wall_ms,
			       .memory_kb = (uint64_t)spec->memory_mb * 1024,
			       .output_bytes = 0, .stderr_bytes = 65536, .fsize_kb = KERNEL_FSIZE_KB,
			       .procs = KERNEL_PROCS, .open_files = KERNEL_OPEN_FILES,
			       .sample_ms = KERNEL_SAMPLE_MS},
		.egress = spec->egress,
		.cpu_quota_pct = spec->cpu_pct,
	};
}

/* A fresh sandbox running the bridge, its stream started. Its wall and
 * CPU limits are the lifetime plus extra_ms (a kernel started ahead
 * waits for adoption). */
static int sandbox_start(struct exec_engine *e, const char *bridge, size_t bridge_len,
			 const struct exec_kernel_spec *spec, uint64_t extra_ms, struct exec_session **s,
			 struct exec_stream **st, struct gv_err *err)
{
	struct exec_kernel_sandbox_job kj;
	exec_kernel_sandbox_job(&kj, bridge, bridge_len, spec, (uint64_t)spec->lifetime_s * 1000 + extra_ms);
	struct exec_phase_result compile;
	*s = NULL;
	*st = NULL;
	int rc = exec_session_open(e, &kj.job, s, &compile, err);
	if (rc == 0 && strcmp(compile.status, "OK") != 0)
		rc = gv_err_set(err, GV_ESANDBOX, "kernel sandbox did not start: %s %s", compile.status,
				compile.message);
	exec_phase_result_free(&compile);
	if (rc == 0 && exec_stream_start(*s, st, err) != 0)
		rc = -1;
	if (rc != 0 && *s) {
		exec_session_close(*s);
		*s = NULL;
	}
	return rc;
}

static void close_sandbox(struct kernel *k)
{
	if (!k->s)
		return;
	struct gv_err err;
	uint64_t peak = 0, ns = 0;
	const struct exec_cgroup *cg = &k->env->engine->cg;
	if (cg->ops->peak_memory(cg, exec_session_cgroup(k->s), &peak, &err) == 0 &&
	    peak / 1024 > k->out->peak_memory_kb)
		k->out->peak_memory_kb = peak / 1024;
	if (cg->ops->cpu_usage(cg, exec_session_cgroup(k->s), &ns, &err) == 0)
		k->cpu_ms_done += ns / 1000000;
	snprintf(k->out->sandbox, sizeof(k->out->sandbox), "%s", exec_session_id(k->s));
	exec_stream_free(k->st);
	k->st = NULL;
	exec_session_close(k->s);
	k->s = NULL;
	kernel_out_decoder_free(&k->dec);
}

/* Tells the bridge of every open connection (a fresh sandbox after a
 * restart keeps the clients). */
static int replay_opens(struct kernel *k, struct gv_err *err)
{
	for (size_t i = 0; i < k->n_conns; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "open %" PRIu64 " %s\n", k->conns[i].id,
				 k->conns[i].framing == KERNEL_FRAMING_V1 ? "v1" : "json");
		if (exec_stream_write(k->st, line, (size_t)n, err) != 0)
			return -1;
	}
	return 0;
}

static void audit_started(struct kernel *k, bool pooled, bool restored)
{
	if (!k->env->audit)
		return;
	char details[200];
	snprintf(details, sizeof(details),
		 "{\"memory_mb\":%u,\"cpu_pct\":%u,\"lifetime_s\":%u,\"idle_s\":%u,\"restart\":%s,\"pooled\":%s,"
		 "\"restored\":%s}",
		 k->spec->memory_mb, exec_session_shape(k->s)->cpu_quota_pct, k->spec->lifetime_s, k->spec->idle_s,
		 k->restarting ? "true" : "false", pooled ? "true" : "false", restored ? "true" : "false");
	k->env->audit(k->env->audit_arg, "kernel.started", exec_session_id(k->s), details);
}

static int open_sandbox(struct kernel *k, struct gv_err *err)
{
	if (sandbox_start(k->env->engine, k->bridge, k->bridge_len, k->spec, 0, &k->s, &k->st, err) != 0)
		return -1;
	kernel_out_decoder_init(&k->dec);
	k->ready_seen = false;
	k->sandbox_t0 = mono_ms();
	if (replay_opens(k, err) != 0) {
		close_sandbox(k);
		return -1;
	}
	audit_started(k, false, false);
	return 0;
}

/* ---- kernels started ahead ---- */

struct exec_kernel_warm {
	struct exec_session *s;
	struct exec_stream *st;
	struct kernel_out_decoder dec;
	bool ready;
	bool restored; /* from a template's image (kernel_image.h) */
	char state[12]; /* the last state the bridge sent */
};

int exec_kernel_warm_wrap(struct exec_session *s, struct exec_stream *st, bool restored, struct exec_kernel_warm **out,
			  struct gv_err *err)
{
	struct exec_kernel_warm *w = calloc(1, sizeof(*w));
	*out = w;
	if (!w) {
		exec_stream_free(st);
		exec_session_close(s);
		return gv_err_set(err, ENOMEM, "kernel: out of memory");
	}
	w->s = s;
	w->st = st;
	w->restored = restored;
	kernel_out_decoder_init(&w->dec);
	snprintf(w->state, sizeof(w->state), restored ? "idle" : "starting");
	exec_session_set_counted(w->s, false); /* it waits: not a job of the worker's */
	return 0;
}

struct exec_session *exec_kernel_warm_session(struct exec_kernel_warm *w)
{
	return w->s;
}

struct exec_stream *exec_kernel_warm_stream(struct exec_kernel_warm *w)
{
	return w->st;
}

bool exec_kernel_warm_restored(const struct exec_kernel_warm *w)
{
	return w->restored;
}

int exec_kernel_warm_start(struct exec_engine *e, const char *bridge, size_t bridge_len, const struct exec_kernel_spec *spec,
			   uint64_t max_wait_ms, struct exec_kernel_warm **out, struct gv_err *err)
{
	*out = NULL;
	if (!spec->lifetime_s || spec->memory_mb < 64)
		return gv_err_set(err, GV_EINVAL, "kernel budgets missing");
	if (spec->egress && spec->egress->grants)
		return gv_err_set(err, GV_EINVAL, "a kernel with a network is never started ahead");
	if (!bridge)
		return gv_err_set(err, GV_ECONFIG, "the kernel bridge could not be read when the worker started");
	struct exec_session *s;
	struct exec_stream *st;
	if (sandbox_start(e, bridge, bridge_len, spec, max_wait_ms, &s, &st, err) != 0)
		return -1;
	return exec_kernel_warm_wrap(s, st, false, out, err);
}

/* Feeds the bridge's bytes to dec and hands each checked frame to fn;
 * false (err) at a protocol error, after which dec fails every call. */
static bool decode_frames(struct kernel_out_decoder *dec, const char *p, size_t n,
			  void (*fn)(void *arg, const struct kernel_out_frame *f), void *arg, struct gv_err *err)
{
	while (n > 0) {
		struct kernel_out_frame f;
		size_t used = 0;
		int r = kernel_out_feed(dec, p, n, &used, &f, err);
		if (r < 0)
			return false;
		p += used;
		n -= used;
		if (r == 1)
			fn(arg, &f);
	}
	return true;
}

struct warm_out {
	struct exec_kernel_warm *w;
	bool failed;
	struct gv_err err;
};

/* Before adoption the bridge has no connection: only `ready` and `state`
 * can come; a message (to nobody) is dropped. */
static void warm_frame(void *arg, const struct kernel_out_frame *f)
{
	struct exec_kernel_warm *w = arg;
	if (f->kind == KERNEL_OUT_READY)
		w->ready = true;
	else if (f->kind == KERNEL_OUT_STATE)
		snprintf(w->state, sizeof(w->state), "%s", f->state);
}

static void warm_output(void *arg, const char *p, size_t n)
{
	struct warm_out *o = arg;
	if (!o->failed && !decode_frames(&o->w->dec, p, n, warm_frame, o->w, &o->err))
		o->failed = true;
}

int exec_kernel_warm_step(struct exec_kernel_warm *w, struct gv_err *err)
{
	struct warm_out o = {.w = w};
	struct exec_phase_result r;
	int rc = exec_stream_step(w->st, true, warm_output, &o, &r, err);
	if (rc == 1) {
		gv_err_set(err, GV_ESANDBOX, "the kernel started ahead ended: %s %s", r.status, r.message);
		exec_phase_result_free(&r);
		return -1;
	}
	if (rc < 0)
		return -1;
	if (o.failed) {
		*err = o.err;
		return -1;
	}
	return w->ready ? 1 : 0;
}

const char *exec_kernel_warm_sandbox(const struct exec_kernel_warm *w)
{
	return exec_session_id(w->s);
}

void exec_kernel_warm_free(struct exec_kernel_warm *w)
{
	if (!w)
		return;
	exec_stream_free(w->st);
	exec_session_close(w->s);
	kernel_out_decoder_free(&w->dec);
	free(w);
}

/* The kernel's first sandbox is w: what it already said counts. */
static int adopt_warm(struct kernel *k, struct exec_kernel_warm *w, struct gv_err *err)
{
	k->s = w->s;
	k->st = w->st;
	k->dec = w->dec;
	exec_session_set_counted(k->s, true);
	k->ready_seen = w->ready;
	if (w->ready)
		snprintf(k->state, sizeof(k->state), "%s", w->state);
	k->sandbox_t0 = mono_ms();
	bool restored = w->restored;
	k->clone_unproven = restored && !w->ready;
	free(w);
	if (replay_opens(k, err) != 0) {
		close_sandbox(k);
		return -1;
	}
	audit_started(k, true, restored);
	if (k->ready_seen && k->env->ready)
		k->env->ready(k->env->audit_arg, (uint64_t)(mono_ms() - k->t0));
	return 0;
}

/* ---- the relay ---- */

static struct kconn *conn_find(struct kernel *k, uint64_t id)
{
	for (size_t i = 0; i < k->n_conns; i++)
		if (k->conns[i].id == id)
			return &k->conns[i];
	return NULL;
}

static void conn_drop(struct kernel *k, struct kconn *c)
{
	*c = k->conns[--k->n_conns];
}

static void to_bridge(struct kernel *k, const char *p, size_t n)
{
	struct gv_err err;
	if (k->st && exec_stream_write(k->st, p, n, &err) != 0)
		gv_warn(k->env->log, "kernel %s: dropped a command: %s", k->spec->kid, err.msg);
}

static void restart(struct kernel *k)
{
	struct gv_err err;
	k->restarting = true;
	set_state(k, "restarting");
	close_sandbox(k);
	if (open_sandbox(k, &err) != 0) {
		kernel_end(k, "error", err.msg);
		return;
	}
	k->out->restarts++;
	if (k->env->audit)
		k->env->audit(k->env->audit_arg, "kernel.restarted", exec_session_id(k->s), "{}");
}

/* One element of gavel:kin:<kid>. */
static void on_command(struct kernel *k, const char *el, size_t n)
{
	struct kernel_cmd c;
	struct gv_err err;
	if (kernel_cmd_parse(el, n, &c, &err) != 0) {
		gv_warn(k->env->log, "kernel %s: %s (dropped)", k->spec->kid, err.msg);
		return;
	}
	struct kconn *conn = c.conn ? conn_find(k, c.conn) : NULL;
	switch (c.kind) {
	case KERNEL_CMD_OPEN:
		if (conn || k->n_conns == EXEC_KERNEL_CONNS_MAX)
			return;
		k->conns[k->n_conns++] = (struct kconn){c.conn, c.framing, mono_ms()};
		to_bridge(k, el, n);
		state_write(k);
		return;
	case KERNEL_CMD_CLOSE:
		if (!conn)
			return;
		conn_drop(k, conn);
		to_bridge(k, el, n);
		k->last_activity = mono_ms();
		state_write(k);
		return;
	case KERNEL_CMD_PING:
		if (conn)
			conn->seen_ms = mono_ms();
		return;
	case KERNEL_CMD_MSG:
		if (!conn)
			return;
		conn->seen_ms = k->last_activity = mono_ms();
		to_bridge(k, el, n);
		return;
	case KERNEL_CMD_INTERRUPT:
		to_bridge(k, "interrupt\n", 10);
		k->out->interrupts++;
		if (k->env->audit)
			k->env->audit(k->env->audit_arg, "kernel.interrupted", k->s ? exec_session_id(k->s) : NULL, "{}");
		return;
	case KERNEL_CMD_RESTART:
		restart(k);
		return;
	case KERNEL_CMD_STOP:
		kernel_end(k, c.reason, "stopped");
		return;
	}
}

/* The BLPOP reply, when it is in: the command it carries. */
static void take_command(struct kernel *k)
{
	struct gv_err err;
	redisContext *c = gv_redis_context(k->env->rin);
	if (redisBufferRead(c) != REDIS_OK) {
		gv_warn(k->env->log, "kernel %s: command connection: %s", k->spec->kid, c->errstr);
		k->blpop_sent = false;
		if (gv_redis_ensure(k->env->rin, &err) != 0)
			gv_warn(k->env->log, "kernel %s: reconnecting: %s", k->spec->kid, err.msg);
		return;
	}
	void *rv = NULL;
	if (redisGetReplyFromReader(c, &rv) != REDIS_OK) {
		k->blpop_sent = false;
		return;
	}
	redisReply *rep = rv;
	if (!rep)
		return; /* not complete yet */
	k->blpop_sent = false;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 && rep->element[1]->type == REDIS_REPLY_STRING) {
		/* Uncounted first: the element left the list, whatever it says. */
		struct gv_kin_args a;
		if (gv_kin_take_args(&a, k->spec->tenant, k->spec->kid, rep->element[1]->len) == 0)
			redis_cmd(k, a.argc, a.argv, a.lens);
		on_command(k, rep->element[1]->str, rep->element[1]->len);
	}
	freeReplyObject(rep);
}

/* A frame from the bridge, checked by the decoder. */
static void on_frame(struct kernel *k, const struct kernel_out_frame *f)
{
	switch (f->kind) {
	case KERNEL_OUT_MSG:
		/* A reply to a connection that closed meanwhile is nobody's. */
		if (f->conn && !conn_find(k, f->conn))
			return;
		k->last_activity = mono_ms();
		publish(k, f->raw, f->raw_len);
		return;
	case KERNEL_OUT_STATE:
		set_state(k, f->state);
		return;
	case KERNEL_OUT_READY:
		k->clone_unproven = false;
		if (k->ready_seen)
			return;
		k->ready_seen = true;
		if (k->restarting) {
			k->restarting = false;
			publish(k, "restarted\n", 10);
		} else if (k->env->ready) {
			k->env->ready(k->env->audit_arg, (uint64_t)(mono_ms() - k->t0));
		}
		return;
	}
}

struct out_ctx {
	struct kernel *k;
	bool failed;
	struct gv_err err;
};

static void relay_frame(void *arg, const struct kernel_out_frame *f)
{
	on_frame(arg, f);
}

static void on_output(void *arg, const char *p, size_t n)
{
	struct out_ctx *o = arg;
	struct kernel *k = o->k;
	k->tokens -= (double)n;
	if (!o->failed && !decode_frames(&k->dec, p, n, relay_frame, k, &o->err))
		o->failed = true;
}

static bool out_budget(struct kernel *k)
{
	int64_t now = mono_ms();
	k->tokens += (double)(now - k->tokens_at) * (OUT_RATE_BPS / 1000.0);
	if (k->tokens > OUT_BURST_B)
		k->tokens = OUT_BURST_B;
	k->tokens_at = now;
	return k->tokens > 0;
}

/* A clone of the node's image that ended before it answered (under
 * heavy load runsc 20221219 lost some: exit 139 and no OOM), or did not
 * answer in time, gives way to a fresh sandbox: the kernel starts late
 * instead of not at all. */
static bool clone_replaced(struct kernel *k, const char *why)
{
	if (!k->clone_unproven)
		return false;
	gv_warn(k->env->log, "kernel %s: its sandbox from the node's image ended before it answered (%s); "
		"starting a fresh one", k->spec->kid, why);
	close_sandbox(k);
	k->clone_unproven = false;
	struct gv_err err;
	if (open_sandbox(k, &err) != 0)
		kernel_end(k, "error", err.msg);
	return true;
}

/* The stream's turn: what the bridge sent, its end. */
static void stream_turn(struct kernel *k, bool reading)
{
	struct out_ctx o = {.k = k};
	struct exec_phase_result r;
	struct gv_err err;
	int rc = exec_stream_step(k->st, reading, on_output, &o, &r, &err);
	if (rc != 0 && !o.failed &&
	    clone_replaced(k, rc < 0 ? err.msg : r.status)) {
		if (rc == 1)
			exec_phase_result_free(&r);
		return;
	}
	if (o.failed) {
		kernel_end(k, "error", o.err.msg);
		gv_warn(k->env->log, "kernel %s: %s", k->spec->kid, o.err.msg);
		if (rc == 1)
			exec_phase_result_free(&r);
		return;
	}
	if (rc == 0)
		return;
	if (rc < 0) {
		kernel_end(k, "error", err.msg);
		return;
	}
	if (!strcmp(r.status, "MLE"))
		kernel_end(k, "memory", r.message);
	else if (!strcmp(r.status, "WLE") || !strcmp(r.status, "TLE"))
		kernel_end(k, "lifetime", r.message);
	else {
		/* The last line of its stderr says why, for the operator's log. */
		char msg[256];
		const char *tail = r.err_out ? r.err_out : "";
		size_t tl = r.err_len;
		while (tl > 0 && tail[tl - 1] == '\n')
			tl--;
		const char *nl = tl ? memrchr(tail, '\n', tl) : NULL;
		const char *from = nl ? nl + 1 : tail;
		snprintf(msg, sizeof(msg), "%s exit %d signal %d: %.*s", r.status, r.exit_code, r.signal,
			 (int)(tl - (size_t)(from - tail) > 160 ? 160 : tl - (size_t)(from - tail)), from);
		if (tl)
			gv_warn(k->env->log, "kernel %s: its stderr ends: %.*s", k->spec->kid,
				(int)(tl > 2000 ? 2000 : tl), tail + (tl > 2000 ? tl - 2000 : 0));
		kernel_end(k, "died", msg);
	}
	exec_phase_result_free(&r);
}

/* Timers: connections gone silent, the idle cull, the lifetime, the
 * model's refresh. */
static void check_timers(struct kernel *k)
{
	int64_t now = mono_ms();
	for (size_t i = 0; i < k->n_conns;) {
		if (now - k->conns[i].seen_ms < CONN_SILENT_MS) {
			i++;
			continue;
		}
		char line[48];
		int n = snprintf(line, sizeof(line), "close %" PRIu64 "\n", k->conns[i].id);
		to_bridge(k, line, (size_t)n);
		conn_drop(k, &k->conns[i]);
		state_write(k);
	}
	/* As Jupyter's culler by default: a kernel still computing is not idle. */
	if (k->n_conns == 0 && strcmp(k->state, "busy") != 0 &&
	    now - k->last_activity >= (int64_t)k->spec->idle_s * 1000)
		kernel_end(k, "idle", "no activity and no connection");
	if (now - k->t0 >= (int64_t)k->spec->lifetime_s * 1000)
		kernel_end(k, "lifetime", "lifetime reached");
	/* A clone that neither answers nor ends (one lost in a burst of
	 * restores: its client waited for kernel_info_reply until it gave
	 * up) gives way to a fresh sandbox, as one that ended does. */
	uint32_t answer_ms = k->env->clone_answer_ms ? k->env->clone_answer_ms : EXEC_KERNEL_CLONE_ANSWER_MS;
	if (!k->ended && k->clone_unproven && now - k->sandbox_t0 >= (int64_t)answer_ms)
		clone_replaced(k, "no answer in time");
	if (k->env->stop && *k->env->stop)
		kernel_end(k, "shutdown", "the executor stops");
	if (now >= k->next_refresh)
		state_write(k);
}

static int wait_turn(struct kernel *k, bool reading, struct gv_err *err)
{
	struct pollfd p[EXEC_STREAM_POLLFDS + 1];
	int timeout = 1000;
	size_t n = k->st ? exec_stream_pollfds(k->st, reading, p, &timeout) : 0;
	/* Redis away: the kernel runs on, its commands wait in the list;
	 * the next turn tries again. */
	struct gv_err rerr;
	bool redis = blpop_send(k, &rerr) == 0;
	if (redis)
		p[n++] = (struct pollfd){gv_redis_context(k->env->rin)->fd, POLLIN, 0};
	else if (mono_ms() >= k->next_redis_warn) {
		gv_warn(k->env->log, "kernel %s: waiting for its commands: %s", k->spec->kid, rerr.msg);
		k->next_redis_warn = mono_ms() + 10000;
	}
	if (!reading && timeout > 5)
		timeout = 5; /* the output budget refills */
	if (poll(p, n, timeout) < 0 && errno != EINTR)
		return gv_err_errno(err, "poll");
	if (redis && (p[n - 1].revents & (POLLIN | POLLHUP | POLLERR)))
		take_command(k);
	return 0;
}

static void relay(struct kernel *k)
{
	struct gv_err err;
	while (!k->ended) {
		bool reading = out_budget(k);
		if (wait_turn(k, reading, &err) != 0) {
			kernel_end(k, "error", err.msg);
			break;
		}
		if (!k->ended && k->st)
			stream_turn(k, reading);
		if (!k->ended)
			check_timers(k);
	}
}

static void keys(struct kernel *k)
{
	snprintf(k->kin, sizeof(k->kin), GV_QUEUE_KIN_PREFIX "%s", k->spec->kid);
	snprintf(k->kout, sizeof(k->kout), GV_QUEUE_KOUT_PREFIX "%s", k->spec->kid);
	snprintf(k->kstate, sizeof(k->kstate), GV_QUEUE_KSTATE_PREFIX "%s", k->spec->kid);
}

int exec_kernel_run(const struct exec_kernel_env *env, const struct exec_kernel_spec *spec,
		    struct exec_kernel_outcome *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!gv_kernel_id_valid(spec->kid))
		return gv_err_set(err, GV_EINVAL, "not a kernel id");
	if (!spec->lifetime_s || !spec->idle_s || spec->memory_mb < 64)
		return gv_err_set(err, GV_EINVAL, "kernel budgets missing");
	struct kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return gv_err_set(err, ENOMEM, "kernel: out of memory");
	k->env = env, k->spec = spec, k->out = out;
	keys(k);
	snprintf(k->state, sizeof(k->state), "starting");
	k->t0 = k->last_activity = k->tokens_at = mono_ms();
	k->tokens = OUT_BURST_B;
	int rc = -1;
	struct exec_kernel_warm *warm = env->warm;
	if (load_bridge(k, err) != 0)
		exec_kernel_warm_free(warm);
	else if ((warm ? adopt_warm(k, warm, err) : open_sandbox(k, err)) == 0) {
		state_write(k);
		/* The model exists from now: clients waiting for a queued
		 * kernel open their channels at this word (frontend). */
		say_state(k);
		relay(k);
		rc = 0;
	}
	close_sandbox(k);
	out->kernel_ms = (uint64_t)(mono_ms() - k->t0);
	out->cpu_ms = k->cpu_ms_done;
	struct gv_kin_args a;
	if (gv_kin_drop_args(&a, spec->tenant, spec->kid) == 0)
		redis_cmd(k, a.argc, a.argv, a.lens);
	free(k);
	return rc;
}

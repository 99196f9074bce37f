/* `gavel problem push DIR`: packs a local problem package folder as tar.gz
 * (libarchive, in memory) and uploads it to a Gavel frontend with the
 * tenant's key (POST /v1/problems, or PUT /v1/problems/ID for a new version
 * of an existing problem). The server unpacks and validates it in a
 * sandbox; with --wait the answer says whether it was accepted, and a
 * rejection's message names the entry or field at fault.
 *
 * Symlinks are followed (a package's test file may be a link to another
 * one); the top-level submissions/ folder stays home (the server judges
 * submissions it is sent, not the package's own).
 *
 * A package without a time limit gets one before it leaves, as problemtools
 * sets it: its submissions/accepted/ are judged here, sandboxed
 * (cli/problem_timelimit.h), and the computed limit travels as a .timelimit
 * file in the archive; --time sets one by hand, --default-time keeps the
 * server's default. */
#include "cli/commands.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/local_stack.h"
#include "cli/local_engine.h"
#include "cli/problem_timelimit.h"
#include "executor/judge/problem.h"

#define PUSH_MAX_BYTES (1024u * 1024u * 1024u)
#define PUSH_DEPTH_MAX 32
#define REPLY_MAX (4u * 1024u * 1024u)

static void problem_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel problem push DIR [--problem ID] [--wait] [--feedback-sample LIST]\n"
		"                              [--feedback-secret LIST] [--json]\n"
		"  --url URL     frontend base URL [env GAVEL_URL, else make run's, else http://127.0.0.1:2358]\n"
		"  --key KEY     tenant API key [env GAVEL_API_KEY, else make run's demo key]\n"
		"  --problem ID  upload a new version of problem ID (PUT) instead of a new problem\n"
		"  --wait        wait for the import's verdict (exit 1 when rejected)\n"
		"  --time S      time limit when the package has none (else: judge submissions/accepted/\n"
		"                here, sandboxed, and set it as problemtools does; needs root and runsc)\n"
		"  --time-cap S  per-test limit for judging submissions/accepted/ [10]\n"
		"  --default-time  push a package without a time limit as it is (the server's default)\n"
		"  LIST          comma list of input, expected, output, diff, or none\n");
}

struct membuf {
	char *data;
	size_t len, cap;
	size_t max;
	int overflow;
};

static int mem_append(struct membuf *m, const void *p, size_t n)
{
	if (m->len + n > m->max) {
		m->overflow = 1;
		return -1;
	}
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 65536;
		while (cap < m->len + n)
			cap *= 2;
		char *d = realloc(m->data, cap);
		if (!d)
			return -1;
		m->data = d;
		m->cap = cap;
	}
	memcpy(m->data + m->len, p, n);
	m->len += n;
	return 0;
}

static la_ssize_t on_write(struct archive *a, void *arg, const void *buf, size_t n)
{
	(void)a;
	return mem_append(arg, buf, n) == 0 ? (la_ssize_t)n : -1;
}

static int add_file(struct archive *a, const char *path, const char *rel, const struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "gavel problem push: %s: %s\n", path, strerror(errno));
		return -1;
	}
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, rel);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, (st->st_mode & 0111) ? 0755 : 0644);
	archive_entry_set_size(e, st->st_size);
	archive_entry_set_mtime(e, st->st_mtime, 0);
	int rc = archive_write_header(a, e) == ARCHIVE_OK ? 0 : -1;
	char buf[65536];
	ssize_t n;
	while (rc == 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n)
			rc = -1;
	close(fd);
	archive_entry_free(e);
	if (rc != 0)
		fprintf(stderr, "gavel problem push: %s: %s\n", rel, archive_error_string(a));
	return rc;
}

static int add_dir(struct archive *a, const char *dir, const char *rel, int depth)
{
	if (depth > PUSH_DEPTH_MAX) {
		fprintf(stderr, "gavel problem push: %s: nested too deeply\n", dir);
		return -1;
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "gavel problem push: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	/* Sorted, so the same folder packs to the same archive. */
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	closedir(d);
	if (n < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		if (rc == 0 && strcmp(nm, ".") && strcmp(nm, "..") && !(depth == 0 && !strcmp(nm, "submissions"))) {
			char path[4096], r[4096];
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", dir, nm);
			snprintf(r, sizeof(r), "%s%s%s", rel, *rel ? "/" : "", nm);
			if (stat(path, &st) != 0) {
				fprintf(stderr, "gavel problem push: %s: %s\n", path, strerror(errno));
				rc = -1;
			} else if (S_ISDIR(st.st_mode)) {
				struct archive_entry *e = archive_entry_new();
				archive_entry_set_pathname(e, r);
				archive_entry_set_filetype(e, AE_IFDIR);
				archive_entry_set_perm(e, 0755);
				if (archive_write_header(a, e) != ARCHIVE_OK)
					rc = -1;
				archive_entry_free(e);
				if (rc == 0)
					rc = add_dir(a, path, r, depth + 1);
			} else if (S_ISREG(st.st_mode)) {
				rc = add_file(a, path, r, &st);
			}
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/* A file of the archive that is not on disk (the computed .timelimit). */
static int add_bytes(struct archive *a, const char *rel, const char *data)
{
	size_t len = strlen(data);
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, rel);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	int rc = archive_write_header(a, e) == ARCHIVE_OK && archive_write_data(a, data, len) == (la_ssize_t)len
			 ? 0
			 : -1;
	archive_entry_free(e);
	if (rc != 0)
		fprintf(stderr, "gavel problem push: %s: %s\n", rel, archive_error_string(a));
	return rc;
}

static int pack(const char *dir, const char *timelimit, struct membuf *out)
{
	struct archive *a = archive_write_new();
	if (!a)
		return -1;
	out->max = PUSH_MAX_BYTES;
	int rc = -1;
	if (archive_write_set_format_pax_restricted(a) == ARCHIVE_OK && archive_write_add_filter_gzip(a) == ARCHIVE_OK &&
	    archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK &&
	    archive_write_open(a, out, NULL, on_write, NULL) == ARCHIVE_OK)
		rc = add_dir(a, dir, "", 0);
	if (rc == 0 && timelimit)
		rc = add_bytes(a, ".timelimit", timelimit);
	if (archive_write_close(a) != ARCHIVE_OK)
		rc = -1;
	if (rc != 0 && out->overflow)
		fprintf(stderr, "gavel problem push: the package is over %u bytes\n", PUSH_MAX_BYTES);
	archive_write_free(a);
	return rc;
}

static size_t on_reply(char *p, size_t size, size_t n, void *arg)
{
	struct membuf *m = arg;
	return mem_append(m, p, size * n) == 0 ? size * n : 0;
}

struct push_opts {
	const char *url, *key, *problem, *fsample, *fsecret;
	int wait, as_json, default_time;
	uint32_t time_ms, cap_ms;
};

/* Parses push's flags into o: -1 to go on, else the exit status. */
static int push_args(int argc, char **argv, struct push_opts *o)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "key", required_argument, NULL, 'k' },
		{ "problem", required_argument, NULL, 'p' },
		{ "wait", no_argument, NULL, 'w' },
		{ "feedback-sample", required_argument, NULL, 'S' },
		{ "feedback-secret", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "time", required_argument, NULL, 't' },
		{ "time-cap", required_argument, NULL, 'c' },
		{ "default-time", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct push_opts){ .url = cli_setting(CLI_API_URL), .key = cli_setting(CLI_API_KEY), .cap_ms = 10000 };
	struct gv_err perr;
	int c;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': o->url = optarg; break;
		case 'k': o->key = optarg; break;
		case 'p': o->problem = optarg; break;
		case 'w': o->wait = 1; break;
		case 'S': o->fsample = optarg; break;
		case 'T': o->fsecret = optarg; break;
		case 'j': o->as_json = 1; break;
		case 't':
		case 'c':
			if (cli_parse_seconds(optarg, c == 't' ? &o->time_ms : &o->cap_ms, &perr) != 0) {
				fprintf(stderr, "gavel problem push: --%s: %s\n", c == 't' ? "time" : "time-cap", perr.msg);
				return 2;
			}
			break;
		case 'd': o->default_time = 1; break;
		case 'h': problem_usage(stdout); return 0;
		default: problem_usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		problem_usage(stderr);
		return 2;
	}
	if (!o->url || !*o->url)
		o->url = "http://127.0.0.1:2358";
	if (!o->key || !*o->key) {
		cli_setting_missing("gavel problem push", "no API key", "--key", CLI_API_KEY);
		return 2;
	}
	return -1;
}

/* The time limit: the package's, else --time, else computed here. Sets
 * *text to the .timelimit file to add (in buf), or NULL when the package's
 * own or the server's default applies. -1 to go on, else the exit status. */
static int push_time_limit(const char *dir, const struct push_opts *o, char *buf, size_t bufsz, char **text)
{
	struct cli_time_limit tl = { 0 };
	struct gv_err perr;
	*text = NULL;
	if (o->time_ms) {
		tl.limit_s = o->time_ms / 1000.0;
	} else if (!o->default_time) {
		FILE *say = o->as_json ? stderr : stdout;
		if (cli_problem_time_limit(dir, o->cap_ms, say, &tl, &perr) != 0) {
			fprintf(stderr, "gavel problem push: %s\n(--time S sets a limit, --default-time pushes without one)\n",
				perr.msg);
			return 1;
		}
	}
	if (tl.limit_s > 0) {
		struct exec_problem p;
		int has = exec_problem_load(&p, dir, NULL, &perr) == 0 &&
			  (p.time_source != EXEC_PROBLEM_TIME_DEFAULT || p.suite);
		exec_problem_free(&p);
		if (has) {
			fprintf(stderr, "gavel problem push: --time: the package has a time limit of its own\n");
			return 2;
		}
		snprintf(buf, bufsz, "%g\n", tl.limit_s);
		*text = buf;
	}
	return -1;
}

/* Sends the archive: POST /v1/problems, or PUT /v1/problems/ID with
 * --problem. 0 with *status and the body in reply, or -1 (said on stderr). */
static int push_upload(CURL *h, const struct push_opts *o, const struct membuf *arc, struct membuf *reply,
		       long *status)
{
	char *q_sample = o->fsample ? curl_easy_escape(h, o->fsample, 0) : NULL;
	char *q_secret = o->fsecret ? curl_easy_escape(h, o->fsecret, 0) : NULL;
	char *q_problem = o->problem ? curl_easy_escape(h, o->problem, 0) : NULL;
	struct curl_slist *hdr = NULL;
	char full[8192], auth[1024];
	int rc = -1;
	int n = snprintf(full, sizeof(full), "%s/v1/problems%s%s?wait=%s%s%s%s%s", o->url, q_problem ? "/" : "",
			 q_problem ? q_problem : "", o->wait ? "true" : "false", q_sample ? "&feedback_sample=" : "",
			 q_sample ? q_sample : "", q_secret ? "&feedback_secret=" : "", q_secret ? q_secret : "");
	snprintf(auth, sizeof(auth), "X-Auth-Token: %s", o->key);
	if (n < 0 || (size_t)n >= sizeof(full) || strchr(o->key, '\n') || strchr(o->key, '\r')) {
		fprintf(stderr, "gavel problem push: URL or key malformed\n");
		goto out;
	}
	hdr = curl_slist_append(hdr, auth);
	hdr = curl_slist_append(hdr, "Content-Type: application/gzip");
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, o->problem ? "PUT" : "POST");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, arc->data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)arc->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, reply);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	CURLcode cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		fprintf(stderr, "gavel problem push: %s: %s\n", o->url, curl_easy_strerror(cc));
		goto out;
	}
	*status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	rc = 0;
out:
	curl_free(q_sample);
	curl_free(q_secret);
	curl_free(q_problem);
	curl_slist_free_all(hdr);
	return rc;
}

/* Says what the server answered; the exit status: 0 unless the push was
 * refused, rejected or failed. */
static int push_report(const struct membuf *reply, long status, int as_json)
{
	int rc = 1;
	json_t *j = reply->data ? json_loadb(reply->data, reply->len, 0, NULL) : NULL;
	if (as_json && reply->data)
		fwrite(reply->data, 1, reply->len, stdout);
	if (!j) {
		fprintf(stderr, "gavel problem push: HTTP %ld with an unreadable answer\n", status);
	} else if (json_object_get(j, "error")) {
		json_t *e = json_object_get(j, "error");
		fprintf(stderr, "gavel problem push: HTTP %ld %s: %s\n", status,
			json_string_value(json_object_get(e, "code")) ?: "",
			json_string_value(json_object_get(e, "message")) ?: "");
	} else {
		const char *st = json_string_value(json_object_get(j, "status")) ?: "?";
		const char *msg = json_string_value(json_object_get(j, "message"));
		if (!as_json)
			printf("%s version %lld %s%s%s\n", json_string_value(json_object_get(j, "id")) ?: "?",
			       (long long)json_integer_value(json_object_get(j, "version")), st, msg ? ": " : "",
			       msg ? msg : "");
		rc = strcmp(st, "rejected") && strcmp(st, "failed") ? 0 : 1;
	}
	json_decref(j);
	return rc;
}

static int push(int argc, char **argv)
{
	struct push_opts o;
	int rc = push_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	const char *dir = argv[optind];
	char timelimit[64], *tl_text;
	rc = push_time_limit(dir, &o, timelimit, sizeof(timelimit), &tl_text);
	if (rc >= 0)
		return rc;
	struct membuf arc = { 0 }, reply = { .max = REPLY_MAX };
	if (pack(dir, tl_text, &arc) != 0) {
		free(arc.data);
		return 1;
	}
	rc = 1;
	long status = 0;
	CURL *h = curl_easy_init();
	if (h && push_upload(h, &o, &arc, &reply, &status) == 0)
		rc = push_report(&reply, status, o.as_json);
	if (h)
		curl_easy_cleanup(h);
	free(arc.data);
	free(reply.data);
	return rc;
}

int cli_cmd_problem(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "push"))
		return push(argc - 1, argv + 1);
	problem_usage(argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr);
	return 2;
}

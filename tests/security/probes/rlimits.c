/* rlimits — gavel-init sets finite rlimits (CPU, file size, open files,
 * processes, stack) and the program cannot raise a hard limit. Also opens
 * files until EMFILE to see the descriptor limit hold. The process limit
 * must be at most 1024 and the descriptor limit at most 65536. */
#include "probe.h"

#include <sys/resource.h>

static const struct {
	int res;
	const char *name;
} lims[] = {
	{ RLIMIT_CPU, "RLIMIT_CPU" },       { RLIMIT_FSIZE, "RLIMIT_FSIZE" },
	{ RLIMIT_NOFILE, "RLIMIT_NOFILE" }, { RLIMIT_NPROC, "RLIMIT_NPROC" },
	{ RLIMIT_STACK, "RLIMIT_STACK" },   { RLIMIT_CORE, "RLIMIT_CORE" },
	{ RLIMIT_AS, "RLIMIT_AS" },         { RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++) {
		struct rlimit rl;
		if (getrlimit(lims[i].res, &rl) < 0) {
			info("getrlimit %s: %s", lims[i].name, strerror(errno));
			continue;
		}
		info("%s soft %lld hard %lld", lims[i].name,
		     rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur,
		     rl.rlim_max == RLIM_INFINITY ? -1LL : (long long)rl.rlim_max);
		int must_be_finite = lims[i].res == RLIMIT_CPU || lims[i].res == RLIMIT_FSIZE ||
				     lims[i].res == RLIMIT_NOFILE || lims[i].res == RLIMIT_NPROC;
		if (must_be_finite && rl.rlim_max == RLIM_INFINITY)
			escaped("%s hard limit is unlimited", lims[i].name);
		if (lims[i].res == RLIMIT_NPROC && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 1024)
			escaped("RLIMIT_NPROC soft limit %lld is above 1024", (long long)rl.rlim_cur);
		if (lims[i].res == RLIMIT_NOFILE && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 65536)
			escaped("RLIMIT_NOFILE soft limit %lld is above 65536", (long long)rl.rlim_cur);
		if (rl.rlim_max != RLIM_INFINITY) {
			struct rlimit up = { RLIM_INFINITY, RLIM_INFINITY };
			if (setrlimit(lims[i].res, &up) == 0)
				escaped("raised the %s hard limit to unlimited", lims[i].name);
			else
				blocked("raise %s errno=%d (%s)", lims[i].name, errno, strerror(errno));
		}
	}
	int n = 0;
	for (; n < 100000; n++)
		if (open("/dev/null", O_RDONLY) < 0)
			break;
	if (n >= 100000)
		escaped("opened 100000 files");
	else
		blocked("open stopped after %d files: errno=%d (%s)", n, errno, strerror(errno));
	return finish();
}

/* mem_bomb — allocates and touches memory 1 MiB at a time without end.
 * The memory limit must stop it and the verdict must be MLE (whether the
 * allocation fails — the program then aborts, as real programs do — or the
 * kernel's OOM killer ends it). Capped at 8 GiB as a host safety net;
 * reaching the cap is reported as an escape. */
#include "probe.h"

int main(void)
{
	size_t mb = 0;
	for (; mb < 8192; mb++) {
		char *p = malloc(1 << 20);
		if (!p) {
			fprintf(stderr, "malloc failed after %zu MiB\n", mb);
			abort();
		}
		memset(p, (int)(mb & 0xff) | 1, 1 << 20);
		if (mb % 64 == 0) {
			fprintf(stderr, "%zu MiB\n", mb);
		}
	}
	escaped("allocated 8 GiB: no memory limit");
	return finish();
}

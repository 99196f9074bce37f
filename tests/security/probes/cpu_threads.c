/* cpu_threads — four threads burn CPU: CPU time is counted over all of the
 * program's threads, so the run must end with TLE and a CPU time at least
 * the limit. */
#include "probe.h"

#include <pthread.h>

static void *spin(void *arg)
{
	(void)arg;
	volatile unsigned long x = 0;
	for (;;)
		x++;
	return NULL;
}

int main(void)
{
	signal(SIGXCPU, SIG_IGN);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, spin, NULL) != 0)
			info("pthread_create %d failed", i);
	info("spinning in 4 threads");
	spin(NULL);
	return 0;
}

/* cpu_spin — burns CPU forever, ignoring SIGXCPU and SIGTERM (the soft
 * limit's warning). The run must end with TLE and a CPU time near the
 * limit. */
#include "probe.h"

int main(void)
{
	signal(SIGXCPU, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	info("spinning");
	volatile unsigned long x = 0;
	for (;;)
		x++;
}

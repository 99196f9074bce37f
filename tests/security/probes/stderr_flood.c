/* stderr_flood — writes to stderr without end. The run must end (OLE, or
 * TLE if the engine drops stderr past its cap and lets the program run to
 * its limit) and the stderr that comes back must be capped. */
#include "probe.h"

int main(void)
{
	static char buf[65536];
	memset(buf, 'E', sizeof buf);
	buf[sizeof buf - 1] = '\n';
	for (;;)
		if (write(2, buf, sizeof buf) < 0 && errno != EINTR)
			return 3;
}

/* stdout_flood — writes to stdout without end. The output limit must end it
 * quickly with OLE, and what comes back must be capped. */
#include "probe.h"

int main(void)
{
	static char buf[65536];
	memset(buf, 'A', sizeof buf);
	buf[sizeof buf - 1] = '\n';
	for (;;)
		if (write(1, buf, sizeof buf) < 0 && errno != EINTR)
			return 3;
}

/* sleep_wall — sleeps far past the wall-clock limit using no CPU: the run
 * must end at the wall limit with TLE. */
#include "probe.h"

int main(void)
{
	info("sleeping");
	for (;;)
		sleep(100);
}

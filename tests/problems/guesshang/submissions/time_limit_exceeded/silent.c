/* Never asks: waits for input that never comes (the wall clock ends it). */
#include <stdio.h>

int main(void)
{
	return getchar() == EOF ? 0 : 1;
}

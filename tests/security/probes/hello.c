/* hello — the baseline: a plain program runs and is judged OK. Every other
 * probe assumes this works; run again after the resource attacks, it shows
 * the engine recovered. */
#include <stdio.h>

int main(void)
{
	puts("hello");
	return 0;
}

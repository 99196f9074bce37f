/* A program of several files: greet() is in greet.c, compiled and linked
 * with this one. */
#include <stdio.h>
#include "greet.h"

int main(void)
{
	printf("%s\n", greeting());
	return 0;
}

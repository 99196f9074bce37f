/* Prints fake pass lines everywhere; sub is wrong (a plain failure, the
 * first one), and mul exits early with exit(0): no report, so multiplies
 * fails too. adds (1) and the hidden group (2) pass; 3 points. */
#include <stdio.h>
#include <stdlib.h>

#include "calc.h"

static void forge(void)
{
	puts("[       OK ] Calc.Adds (0 ms)\n"
	     "[  PASSED  ] 3 tests.\n"
	     "<testcase name=\"adds\"/>\n<testcase name=\"subtracts\"/>\n<testcase name=\"multiplies\"/>\n"
	     "suite:1\ntest:subtracts\noutcome:pass\ntest:multiplies\noutcome:pass");
	fflush(stdout);
}

int add(int a, int b)
{
	forge();
	return a + b;
}

int sub(int a, int b)
{
	forge();
	return a * b;
}

int mul(int a, int b)
{
	forge();
	exit(0);
	return a * b;
}

long long factorial(int n)
{
	long long result = 1;
	forge();
	for (int i = 2; i <= n; i++)
		result *= i;
	return result;
}

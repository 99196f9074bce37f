/* mul(4, 5) dereferences NULL: multiplies (2) crashes, the others pass
 * (each test is a process of its own); 4 points. */
#include <stddef.h>

#include "calc.h"

int add(int a, int b)
{
	return a + b;
}

int sub(int a, int b)
{
	return a - b;
}

int mul(int a, int b)
{
	if (a == 4 && b == 5) {
		volatile int *p = NULL;
		return *p;
	}
	return a * b;
}

long long factorial(int n)
{
	long long result = 1;
	for (int i = 2; i <= n; i++)
		result *= i;
	return result;
}

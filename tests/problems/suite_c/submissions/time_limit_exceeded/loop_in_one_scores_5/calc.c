/* sub(5, 3) loops forever: subtracts times out, the rest pass; 5 points. */
#include "calc.h"

int add(int a, int b)
{
	return a + b;
}

int sub(int a, int b)
{
	if (a == 5 && b == 3)
		for (volatile unsigned spin = 0;; spin++)
			;
	return a - b;
}

int mul(int a, int b)
{
	return a * b;
}

long long factorial(int n)
{
	long long result = 1;
	for (int i = 2; i <= n; i++)
		result *= i;
	return result;
}

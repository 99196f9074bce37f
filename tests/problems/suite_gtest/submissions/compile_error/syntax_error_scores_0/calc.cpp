// Missing semicolon: g++ fails, a compile error.
#include "calc.h"

int add(int a, int b) { return a + b; }

int sub(int a, int b) { return a - b }

int mul(int a, int b) { return a * b; }

long long factorial(int n) {
    long long result = 1;
    for (int i = 2; i <= n; i++) result *= i;
    return result;
}

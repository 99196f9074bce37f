# Compiles, but importing it fails (a module that is not installed), so
# pytest cannot collect either test file: every test of both groups fails
# at once with the import error, one pytest run per group, never one per
# test.
import gavel_fixture_no_such_module  # noqa: F401


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def factorial(n):
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


def is_prime(n):
    return n > 1 and all(n % i for i in range(2, int(n ** 0.5) + 1))


class Counter:
    def __init__(self):
        self.count = 0

    def inc(self):
        self.count += 1

    def value(self):
        return self.count

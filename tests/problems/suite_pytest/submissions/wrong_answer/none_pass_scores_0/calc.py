# Importable, but every function is wrong: no test passes.


def add(a, b):
    return a - b


def sub(a, b):
    return a + b


def mul(a, b):
    return a + b


def factorial(n):
    return n


def is_prime(n):
    return True


class Counter:
    def inc(self):
        pass

    def value(self):
        return 0

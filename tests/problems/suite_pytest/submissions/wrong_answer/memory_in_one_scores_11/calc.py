# Correct but for mul(7, 0), which allocates without end: that test fails
# (MemoryError under the test's address-space limit), every other passes.


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    if b == 0:
        hoard = []
        while True:
            hoard.append(bytearray(1 << 20))
    return a * b


def factorial(n):
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


class Counter:
    def __init__(self):
        self.count = 0

    def inc(self):
        self.count += 1

    def value(self):
        return self.count

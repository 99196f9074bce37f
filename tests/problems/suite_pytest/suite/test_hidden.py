# test_hidden.py: hidden tests (big factorial, primality). GAVEL-HIDDEN-PYTEST-7f3a
import calc


def test_big_factorial():
    assert calc.factorial(20) == 2432902008176640000


def test_is_prime():
    assert calc.is_prime(2) and calc.is_prime(97)
    assert not calc.is_prime(1) and not calc.is_prime(91)

// calc_test.cpp: visible tests of add, sub and mul.
#include <gtest/gtest.h>

#include "calc.h"

TEST(Calc, Adds) {
    EXPECT_EQ(add(2, 3), 5);
    EXPECT_EQ(add(-1, 1), 0);
}

TEST(Calc, Subtracts) {
    EXPECT_EQ(sub(5, 3), 2);
    EXPECT_EQ(sub(3, 5), -2);
}

TEST(Calc, Multiplies) {
    EXPECT_EQ(mul(4, 5), 20);
    EXPECT_EQ(mul(7, 0), 0);
}

// hidden_test.cpp: hidden test of factorial. GAVEL-HIDDEN-GTEST-7f3a
#include <gtest/gtest.h>

#include "calc.h"

TEST(CalcHidden, Factorial) {
    EXPECT_EQ(factorial(0), 1);
    EXPECT_EQ(factorial(20), 2432902008176640000LL);
}

// HiddenCalcTest.java: hidden test of Calc.factorial. GAVEL-HIDDEN-JUNIT-7f3a
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HiddenCalcTest {
    @Test
    void factorial() {
        assertEquals(1L, Calc.factorial(0));
        assertEquals(2432902008176640000L, Calc.factorial(20));
    }
}

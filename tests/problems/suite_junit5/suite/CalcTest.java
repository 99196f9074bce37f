// CalcTest.java: visible tests of the student's Calc (add, sub, mul).
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void adds() {
        assertEquals(5, Calc.add(2, 3));
        assertEquals(0, Calc.add(-1, 1));
    }

    @Test
    void subtracts() {
        assertEquals(2, Calc.sub(5, 3));
        assertEquals(-2, Calc.sub(3, 5));
    }

    @Test
    void multiplies() {
        assertEquals(20, Calc.mul(4, 5));
        assertEquals(0, Calc.mul(7, 0));
    }
}

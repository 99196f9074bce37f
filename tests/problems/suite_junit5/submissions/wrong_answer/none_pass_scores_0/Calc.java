// Every method is wrong (but it compiles): no test passes.
public class Calc {
    public static int add(int a, int b) {
        return a + b + 1;
    }

    public static int sub(int a, int b) {
        return a + b + 1;
    }

    public static int mul(int a, int b) {
        return a + b;
    }

    public static long factorial(int n) {
        long result = 1;
        for (int i = 2; i <= n; i++) {
            result *= i;
        }
        return n;
    }
}

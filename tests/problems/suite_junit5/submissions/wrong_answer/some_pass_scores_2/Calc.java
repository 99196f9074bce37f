// sub and factorial are wrong: fails subtracts and the hidden test; 2 points.
public class Calc {
    public static int add(int a, int b) {
        return a + b;
    }

    public static int sub(int a, int b) {
        return b - a;
    }

    public static int mul(int a, int b) {
        return a * b;
    }

    public static long factorial(int n) {
        long result = 0;
        for (int i = 2; i <= n; i++) {
            result *= i;
        }
        return result;
    }
}

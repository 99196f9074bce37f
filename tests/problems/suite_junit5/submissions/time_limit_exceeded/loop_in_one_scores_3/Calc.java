// mul(4, 5) loops forever: multiplies times out, the rest pass; 3 points.
public class Calc {
    public static int add(int a, int b) {
        return a + b;
    }

    public static int sub(int a, int b) {
        return a - b;
    }

    public static int mul(int a, int b) {
        if (a == 4 && b == 5) {
            while (true) {
            }
        }
        return a * b;
    }

    public static long factorial(int n) {
        long result = 1;
        for (int i = 2; i <= n; i++) {
            result *= i;
        }
        return result;
    }
}

// Compiles on its own, but its methods are not the ones the tests call
// (add takes strings, factorial is missing): neither test class compiles
// against it. Every test of each group fails at once with javac's
// message; none runs.
public class Calc {
    public static int add(String a, String b) {
        return Integer.parseInt(a) + Integer.parseInt(b);
    }

    public static int sub(int a, int b) {
        return a - b;
    }

    public static int mul(int a, int b) {
        return a * b;
    }
}

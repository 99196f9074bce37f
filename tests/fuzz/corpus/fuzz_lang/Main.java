record Point(int x, int y) {}
enum Color { RED }
interface Shape { }
class Main { public static void main(String... a) {} }

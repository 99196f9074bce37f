package org.example.app;

import java.util.*;

/* class Fake {} */
@SuppressWarnings("x")
final class Helper { String s = "class Nope {"; char c = '{'; }

public class Hello {
    static String t = """
        class InText {}
        """;
    public static void main(String[] args) { System.out.println(1); }
}

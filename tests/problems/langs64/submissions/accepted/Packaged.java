// A package line, a public class that is not Main, a helper class before
// it, and braces in strings and comments that must not confuse the scan:
// public class Decoy {
package contest.langs;

import java.util.Scanner;

class Helper {
	static final String BRACES = "}} public class Wrong {";

	static long sum(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += i % 7;
		return s;
	}
}

public class Solver {
	public static void main(String[] args) {
		Scanner in = new Scanner(System.in);
		int n = in.nextInt();
		char c = '}';
		System.out.println(Helper.sum(n) + (Helper.BRACES.length() + c) * 0);
	}
}

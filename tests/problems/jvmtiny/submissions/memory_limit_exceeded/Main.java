// A correct sum: the JVM itself does not fit in 1 MiB of heap.
import java.util.Scanner;

public class Main {
	public static void main(String[] args) {
		Scanner in = new Scanner(System.in);
		System.out.println(in.nextLong() + in.nextLong());
	}
}

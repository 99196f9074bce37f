// Keeps 1 MiB arrays forever: the heap (the 64 MiB limit) overflows and the
// JVM throws OutOfMemoryError, which is MLE, not RE.
import java.util.ArrayList;

public class Keep {
	public static void main(String[] args) {
		ArrayList<int[]> kept = new ArrayList<>();
		while (true)
			kept.add(new int[256 * 1024]);
	}
}

// Asks once, then keeps every array it makes: the heap (-Xmx, the
// problem's memory limit) runs out, java.lang.OutOfMemoryError, MLE as in
// a batch problem.
import java.util.ArrayList;
import java.util.List;

public class Hog {
	public static void main(String[] args) {
		System.out.println("? 500");
		System.out.flush();
		List<long[]> kept = new ArrayList<>();
		for (;;)
			kept.add(new long[1 << 20]);
	}
}

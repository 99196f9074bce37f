// `public class array`: not Main, not capitalised. Kattis and DMOJ accept
// it; so must we. Keeps a 40 MiB int[] under the 64 MiB limit.
import java.io.*;

public class array {
	public static void main(String[] args) throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		int n = Integer.parseInt(in.readLine().trim());
		int[] a = new int[n];
		for (int i = 0; i < n; i++)
			a[i] = i % 7;
		long s = 0;
		for (int i = 0; i < n; i++)
			s += a[i];
		System.out.println(s);
	}
}

// java_escape (Java) — the promises seen through the JVM: a clean
// environment, no host files, no network, and a process spawned from Java
// is just as confined. stdin: "PORT <n>" (the driver's host listener).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;

public class Main {
    static int escapes = 0;

    static void say(String tag, String msg) {
        if (tag.equals("ESCAPED")) escapes++;
        System.out.println(tag + " " + msg);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String l; (l = in.readLine()) != null; )
            if (l.startsWith("PORT ")) port = Integer.parseInt(l.substring(5).trim());

        Map<String, String> env = System.getenv();
        for (String k : new TreeSet<>(env.keySet())) {
            System.out.println("ENV " + k);
            for (String w : new String[] {"GAVEL", "DATABASE", "REDIS", "PG", "SECRET", "TOKEN"})
                if (k.contains(w)) say("ESCAPED", "environment carries " + k);
        }

        for (String p : new String[] {"/etc/shadow", "/root/.ssh/authorized_keys", "/work/main/Makefile", "/proc/1/mem"}) {
            try {
                Files.readAllBytes(Path.of(p));
                say("ESCAPED", "read " + p);
            } catch (Exception e) {
                say("BLOCKED", "read " + p + ": " + e);
            }
        }

        String[][] targets = {{"127.0.0.1", String.valueOf(port)}, {"169.254.169.254", "80"}, {"8.8.8.8", "53"}};
        for (String[] t : targets) {
            int p = Integer.parseInt(t[1]);
            if (p == 0) continue;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(t[0], p), 1000);
                say("ESCAPED", "connected to " + t[0] + ":" + p);
            } catch (java.net.SocketTimeoutException e) {
                say("ESCAPED", "connect to " + t[0] + ":" + p + " still pending after 1 s: a route exists");
            } catch (Exception e) {
                say("BLOCKED", "connect " + t[0] + ":" + p + ": " + e);
            }
        }

        try {
            Process pr = new ProcessBuilder("/bin/sh", "-c", "id -u; cat /etc/shadow; ls /work")
                    .redirectErrorStream(false).start();
            String out = new String(pr.getInputStream().readAllBytes());
            pr.waitFor();
            String uid = out.split("\n", 2)[0].trim();
            if (uid.equals("0")) say("ESCAPED", "a shell runs as root");
            if (out.contains("root:") || out.split("\n").length > 1)
                say("ESCAPED", "shell read host files");
            else
                say("BLOCKED", "shell: uid " + uid + ", nothing read");
        } catch (Exception e) {
            say("BLOCKED", "shell: " + e);
        }
        System.out.println("DONE escaped=" + escapes);
    }
}

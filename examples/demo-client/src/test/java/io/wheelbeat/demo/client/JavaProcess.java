package io.wheelbeat.demo.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/** Starts a main class of the test class path in its own JVM, and reads its output. */
final class JavaProcess {

    private JavaProcess() {}

    /** Starts {@code main} with {@code jvmOptions} and {@code args}, its stderr merged into stdout. */
    static Process start(Class<?> main, List<String> jvmOptions, String... args) throws IOException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** Streams a process's output lines into a queue, on a daemon thread. */
    static BlockingQueue<String> lines(Process process) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = in.readLine()) != null) {
                            lines.add(line);
                        }
                    } catch (IOException e) {
                        lines.add("output ended: " + e);
                    }
                },
                "process-output");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    /** A port free now (a tiny race with other processes remains, as with any such choice). */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}

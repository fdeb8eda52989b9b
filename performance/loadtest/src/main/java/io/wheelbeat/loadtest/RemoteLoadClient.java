package io.wheelbeat.loadtest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP tier's client side, in a separate process ({@link TcpClientProcess}) started with the
 * same scenario. The two talk in lines over the child's standard input and output: commands go
 * down, {@code @}-prefixed status lines come up; anything else the child prints is passed on.
 */
final class RemoteLoadClient implements LoadClient {

    private static final Logger log = LoggerFactory.getLogger(RemoteLoadClient.class);
    private static final long ANSWER_SECONDS = 120;

    private final Process process;
    private final Writer commands;
    private final BlockingQueue<String[]> answers = new LinkedBlockingQueue<>();
    private volatile int opened;
    private volatile int failed;
    private volatile boolean rampDone;

    private RemoteLoadClient(Process process) {
        this.process = process;
        this.commands = process.outputWriter(StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readLines, "loadtest-client-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts the client process for {@code settings} against {@code servers} (each arm's, in the
     * round's arm order); it connects on {@link #start()}.
     */
    static RemoteLoadClient launch(Settings settings, List<InetSocketAddress> servers) throws IOException {
        List<String> command = new ArrayList<>(ChildJvm.command(settings.jvmOptions()));
        command.add("-D" + TcpClientProcess.LOG_TARGET_PROPERTY + "=System.err");
        command.add(LoadTest.class.getName());
        command.add("--tcp-client");
        command.add("--connect");
        command.add(String.join(
                ",",
                servers.stream().map(a -> a.getHostString() + ":" + a.getPort()).toList()));
        command.addAll(settings.toArgs());
        log.info("starting the TCP client process");
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        RemoteLoadClient client = new RemoteLoadClient(process);
        client.await("READY");
        return client;
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            PrintStream out = System.out;
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.startsWith("@")) {
                    out.println(line);
                    continue;
                }
                String[] parts = line.substring(1).trim().split(" ");
                if (parts[0].equals("STATUS") && parts.length == 4) {
                    opened = Integer.parseInt(parts[1]);
                    failed = Integer.parseInt(parts[2]);
                    rampDone = parts[3].equals("1");
                } else {
                    answers.add(parts);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.warn("lost the TCP client process's output", e);
        }
        answers.add(new String[] {"GONE"});
    }

    private void send(String command) throws IOException {
        commands.write(command + "\n");
        commands.flush();
    }

    private String[] await(String answer) throws IOException {
        try {
            String[] parts = answers.poll(ANSWER_SECONDS, TimeUnit.SECONDS);
            if (parts == null || !parts[0].equals(answer)) {
                throw new IOException("the TCP client process answered "
                        + (parts == null ? "nothing" : String.join(" ", parts)) + " instead of " + answer);
            }
            return parts;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for the TCP client process", e);
        }
    }

    @Override
    public void start() {
        try {
            send(TcpClientProcess.START);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the TCP client process", e);
        }
    }

    @Override
    public int opened() {
        return opened;
    }

    @Override
    public int failed() {
        return failed;
    }

    @Override
    public boolean rampDone() {
        return rampDone;
    }

    @Override
    public void pauseOpening() throws IOException {
        send(TcpClientProcess.PAUSE);
        String[] answer = await("PAUSED");
        opened = Integer.parseInt(answer[1]);
        failed = Integer.parseInt(answer[2]);
    }

    @Override
    public void resumeOpening() throws IOException {
        send(TcpClientProcess.RESUME);
    }

    @Override
    public void beginSilence() throws IOException {
        send(TcpClientProcess.SILENCE);
    }

    @Override
    public void closeConnections() throws IOException {
        send(TcpClientProcess.CLOSE);
    }

    @Override
    public ClientStats stats() throws IOException {
        send(TcpClientProcess.STATS);
        String[] a = await("STATS");
        return new ClientStats(Long.parseLong(a[1]), Long.parseLong(a[2]), Long.parseLong(a[3]));
    }

    @Override
    public void close() {
        try {
            send(TcpClientProcess.EXIT);
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                log.warn("the TCP client process did not exit; killing it");
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
